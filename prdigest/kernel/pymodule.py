"""The one mapping from a Python file's path to its dotted module name, shared by the facts, the index and the
match (an upstream with a ``src/`` layout, transformers, names its modules without the ``src``)."""

from __future__ import annotations

#: Suffixes of files Python imports (a stub names the same module as its source).
PYTHON_SUFFIXES = (".py", ".pyi")


def is_python(path: str) -> bool:
    """Whether ``path`` is a file Python can import (``.py`` or a ``.pyi`` stub)."""
    return path.endswith(PYTHON_SUFFIXES)


def module_of(path: str) -> str:
    """``vllm/a/b.py`` → ``vllm.a.b``; ``vllm/a/__init__.py`` → ``vllm.a``; ``src/pkg/__init__.pyi`` → ``pkg``."""
    return module_and_package(path)[0]


def module_and_package(path: str) -> tuple[str, bool]:
    """The module :func:`module_of` names, and whether the file is a package's ``__init__``."""
    for suffix in PYTHON_SUFFIXES:
        if path.endswith(suffix):
            path = path[: -len(suffix)]
            break
    parts = [p for p in path.split("/") if p]
    if len(parts) > 1 and parts[0] == "src" and parts[1] != "__init__":  # src/pkg/... is importable as pkg...
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False
