"""Prompt files (``prompts/*.yaml``: ``version``, ``system``, ``user``) and their strict rendering.

Rendering is Jinja2 with ``StrictUndefined`` and no autoescaping (prompts are not HTML): a variable the
caller did not pass is an error naming the prompt, the part and the variable, never an empty string.
Untrusted PR text enters templates only through the ``data`` filter, which neutralises the
``<pr-data>`` delimiters so a PR body cannot close the data block and speak as the prompt.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jinja2
import jinja2.meta
from pydantic import BaseModel, ConfigDict, Field

import prompts as _prompts_package
from prdigest.kernel.errors import ConfigError
from prdigest.kernel.i18n import language_name
from prdigest.kernel.promptdata import defuse_fence
from prdigest.kernel.yamlfile import load_yaml_model

PROMPTS_DIR = Path(_prompts_package.__file__).resolve().parent

def data(value: object) -> str:
    """Untrusted text for a prompt: the ``<pr-data>`` delimiters it contains, ASCII or look-alike, are defused
    (:func:`prdigest.kernel.promptdata.defuse_fence`)."""
    return defuse_fence(str(value))


_env = jinja2.Environment(
    undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=False,
    trim_blocks=True, lstrip_blocks=True,
)
_env.filters["data"] = data


class PromptFile(BaseModel):
    """One prompt file as written."""

    model_config = ConfigDict(extra="forbid")

    version: str = Field(min_length=1)
    system: str = Field(min_length=1)
    user: str = Field(min_length=1)


class Prompt:
    """A loaded prompt: its name, version and compiled system/user templates."""

    def __init__(self, name: str, path: Path, spec: PromptFile) -> None:
        self.name, self.path, self.version = name, path, spec.version
        self._sources = {"system": spec.system, "user": spec.user}
        try:
            self._templates = {part: _env.from_string(src) for part, src in self._sources.items()}
        except jinja2.TemplateSyntaxError as exc:
            raise ConfigError(f"{path}: prompt template syntax error at line {exc.lineno}: {exc.message}") from exc
        self._needs = {part: frozenset(jinja2.meta.find_undeclared_variables(_env.parse(src)))
                       for part, src in self._sources.items()}
        #: What callers must give (``language_name`` is given here, from ``language``).
        self.variables = frozenset().union(*self._needs.values()) - {"language_name"}

    def render(self, part: str, context: Mapping[str, Any]) -> str:
        """Render ``part`` (``system`` or ``user``); a missing variable raises :class:`ConfigError`. With a
        ``language``, ``language_name`` is given too: the language in its own words (its catalog's meta.name)."""
        if "language" in context and "language_name" not in context:
            context = {**context, "language_name": language_name(str(context["language"]))}
        missing = sorted(self._needs[part] - set(context))
        if missing:
            raise ConfigError(f"{self.path} ({part}): template variable(s) not provided: {', '.join(missing)}")
        try:
            return self._templates[part].render(**context).strip()
        except jinja2.UndefinedError as exc:  # a missing attribute or key deeper in a passed value
            raise ConfigError(f"{self.path} ({part}): undefined template value: {exc.message}") from exc

    def messages(self, context: Mapping[str, Any]) -> list[dict[str, str]]:
        """The chat messages ``[system, user]`` for ``context``."""
        return [{"role": "system", "content": self.render("system", context)},
                {"role": "user", "content": self.render("user", context)}]


@functools.lru_cache(maxsize=None)
def _load(path: Path) -> Prompt:
    spec = load_yaml_model(path, PromptFile, what="prompt")
    return Prompt(path.stem, path, spec)


def load_prompt(name: str, directory: Path | None = None) -> Prompt:
    """The prompt ``<directory>/<name>.yaml`` (default: the shipped ``prompts/``)."""
    return _load((directory or PROMPTS_DIR) / f"{name}.yaml")
