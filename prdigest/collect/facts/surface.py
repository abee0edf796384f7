"""Where a repo keeps what its users depend on besides its Python API: environment variables, command-line and
engine arguments, config classes; which files are tests and which packages are public.

Declared by the rules file's optional ``code:`` section (:class:`CodeRules``); without one
every Python file outside tests, docs, examples and benchmarks counts as public, and no file is an env,
argument or config file.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from prdigest.kernel.patterns import Pattern, check, compile_rule
from prdigest.kernel.pymodule import module_of

#: A path pattern of the ``code:`` section, checked at load like every rule pattern (RE2, or a bounded one).
Regex = Annotated[str, Field(min_length=1), AfterValidator(check)]

#: Test files: under a tests/ or test/ folder, or named test_*.py / *_test.py / conftest.py.
DEFAULT_TESTS = r"(^|/)(tests?|testing)/|(^|/)(test_[^/]*|[^/]*_test|conftest)\.py$"
#: Environment-variable registries when the ``code:`` section names none.
DEFAULT_ENV = compile_rule(r"(^|/)envs?\.py$")
#: Python files that are not importable API: docs, examples, benchmarks, scripts, tools, build files.
DEFAULT_NOT_API = (r"^(docs?|examples?|benchmarks?|scripts?|tools?|\.github|\.buildkite|ci)/|"
                   r"(^|/)(setup|noxfile|conftest)\.py$")


class CodeRules(BaseModel):
    """Where the repo keeps what its users depend on besides its Python API (code facts,
    prdigest/collect/facts/): path patterns are searched (``re.search``) in each changed file's path."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: Top-level import packages whose public names are the API (default: every Python file outside tests,
    #: docs, examples and benchmarks).
    packages: tuple[Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_.]*$")], ...] = ()
    #: Files declaring environment variables (a dict of ``"NAME": ...`` entries, ``os.getenv("NAME")``).
    env_files: tuple[Regex, ...] = ()
    #: Files with command-line arguments (``add_argument("--name", ...)``).
    argument_files: tuple[Regex, ...] = ()
    #: Dataclasses whose fields are arguments (vLLM's ``EngineArgs``).
    argument_classes: tuple[Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")], ...] = ()
    #: Files whose ``@dataclass`` / ``@config`` classes are configuration.
    config_files: tuple[Regex, ...] = ()
    #: Decorators that make a class in a config file a config class.
    config_decorators: tuple[Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")], ...] = ("dataclass", "config")
    #: Test files (default: under tests/ or test/, or named test_*.py, *_test.py, conftest.py).
    tests: tuple[Regex, ...] = ()


@dataclass(frozen=True)
class Surface:
    """The compiled ``code:`` section (or its defaults)."""

    #: Top-level import packages whose public names are API (empty: every Python file outside tests and docs).
    packages: tuple[str, ...] = ()
    env_files: tuple[str, ...] = ()
    argument_files: tuple[str, ...] = ()
    #: Dataclasses whose fields are arguments (vLLM's ``EngineArgs``), wherever they are defined.
    argument_classes: tuple[str, ...] = ()
    config_files: tuple[str, ...] = ()
    #: Decorators that make a class in a config file a config class (``dataclass``, vLLM's ``config``).
    config_decorators: tuple[str, ...] = ("dataclass", "config")
    tests: str = DEFAULT_TESTS
    not_api: str = DEFAULT_NOT_API
    _compiled: dict[str, Pattern] = field(default_factory=dict, compare=False, repr=False)

    def _any(self, key: str, patterns: tuple[str, ...] | str) -> Pattern:
        if key not in self._compiled:
            items = (patterns,) if isinstance(patterns, str) else patterns
            # A rules file's patterns: on RE2, or bounded in time (prdigest.kernel.patterns).
            self._compiled[key] = compile_rule("|".join(f"(?:{p})" for p in items) if items else r"(?!)")
        return self._compiled[key]

    def is_test(self, path: str) -> bool:
        return bool(self._any("tests", self.tests).search(path))

    def is_env_file(self, path: str) -> bool:
        """A declared env file; without a declaration, a module named ``envs.py`` / ``env.py`` (vLLM's and its
        plugins' registry of environment variables)."""
        if not self.env_files:
            return bool(DEFAULT_ENV.search(path)) and not self.is_test(path)
        return bool(self._any("env", self.env_files).search(path))

    def is_argument_file(self, path: str) -> bool:
        return bool(self._any("args", self.argument_files).search(path))

    def is_config_file(self, path: str) -> bool:
        return bool(self._any("config", self.config_files).search(path))

    def is_api(self, path: str) -> bool:
        """Whether a Python file's public names are API (not a test, doc, example or build script)."""
        if self.is_test(path) or self._any("not_api", self.not_api).search(path):
            return False
        if not self.packages:
            return True
        module = module_name(path)
        return any(module == p or module.startswith(p + ".") for p in self.packages)

    @property
    def key(self) -> str:
        """A short hash of the section: facts cached under another section are computed again."""
        blob = json.dumps([self.packages, self.env_files, self.argument_files, self.argument_classes,
                           self.config_files, self.config_decorators, self.tests, self.not_api])
        return hashlib.sha256(blob.encode()).hexdigest()[:12]


def module_name(path: str) -> str:
    """``vllm/config/model.py`` → ``vllm.config.model``; ``src/pkg/__init__.py`` → ``pkg`` (the kernel's
    :func:`~prdigest.kernel.pymodule.module_of`)."""
    return module_of(path)


def surface_for(code: CodeRules | None) -> Surface:
    """The :class:`Surface` a rules file's ``code:`` section declares (the defaults without one)."""
    if code is None:
        return Surface()
    return Surface(packages=tuple(code.packages), env_files=tuple(code.env_files),
                   argument_files=tuple(code.argument_files), argument_classes=tuple(code.argument_classes),
                   config_files=tuple(code.config_files), config_decorators=tuple(code.config_decorators),
                   tests="|".join(f"(?:{p})" for p in code.tests) if code.tests else DEFAULT_TESTS)
