"""The releases of a package a tree pins at one commit: what its requirement files, ``pyproject.toml``,
``setup.py`` and Dockerfiles install (``vllm==0.17.0``, ``ARG VLLM_TAG=v0.17.0``). Commit pins are no release and
are left out. The version gates step asks it whether a release whose gates a PR removed was still the one main
installed before the PR (prdigest/collect/facts/versiongates.py)."""

from __future__ import annotations

import re
from collections.abc import Callable

from prdigest.collect.facts import pins, toolchain
from prdigest.collect.git import UpstreamClone
from prdigest.collect.git.texts import tree_texts
from prdigest.kernel.actions import product, version_of
from prdigest.kernel.models import Change

_SHA = re.compile(r"[0-9a-f]{7,40}")
_DOCKERFILE = re.compile(r"(^|/)(Dockerfile[^/]*|[^/]+\.dockerfile|Containerfile[^/]*)$", re.IGNORECASE)
#: Each kind of file with the name its reader is given (pyproject and setup.py are read by their own names).
_FILES: tuple[tuple[str, Callable[[str], bool]], ...] = (
    ("requirements.txt", lambda p: pins.is_pin_file(p) and p.rpartition("/")[2] not in ("pyproject.toml", "setup.py")),
    ("pyproject.toml", lambda p: p.rpartition("/")[2] == "pyproject.toml"),
    ("setup.py", lambda p: p.rpartition("/")[2] == "setup.py"),
    ("Dockerfile", lambda p: bool(_DOCKERFILE.search(p))),
)


def key(name: str) -> str:
    """What a pin or a gate is of, compared without case or separators: ``VLLM_TAG`` and ``vllm`` are one."""
    return re.sub(r"[-_.]+", "-", name).lower()


def releases(clone: UpstreamClone, sha: str, packages: set[str],
             where: Callable[[str], bool] | None = None) -> dict[str, set[str]]:
    """Package key (of ``packages``) → the releases the tree at ``sha`` pins it to (in the files ``where`` keeps:
    all by default); raises :class:`~prdigest.collect.git.GitUnavailable` when the tree cannot be read."""
    found: dict[str, set[str]] = {}
    for name, kind in _FILES:
        wanted = kind if where is None else (lambda p, kind=kind: kind(p) and where(p))
        for text, _ in tree_texts(clone, sha, wanted).values():
            values = toolchain.values(name, text) if name == "Dockerfile" else pins.pins(name, text)
            for thing, spec in values.items():
                package = key(product(Change(kind="dependency", symbol=thing, path=name)))
                version = version_of(spec)
                if package in packages and version and not _SHA.fullmatch(version):
                    found.setdefault(package, set()).add(version.removeprefix("v"))
    return found


def older(release: str, pinned: set[str]) -> bool:
    """Whether ``release`` is older than every release in ``pinned`` (False when nothing is pinned)."""
    def parts(v: str) -> tuple[int, ...]:
        return tuple(int(x) for x in re.findall(r"\d+", v)[:4])
    return bool(pinned) and all(parts(release) < parts(p) for p in pinned)
