"""``.github/labeler.yml`` (actions/labeler v4 and v5) as areas: each label with the globs that apply it.

v4: ``label: [glob, {any: [globs]}, {all: [globs]}]`` (a string alone is ``{any: [glob]}``).
v5: ``label: [{changed-files: [{any-glob-to-any-file: …}, …]}, {head-branch: …}, {base-branch: …},
{any: [...]}, {all: [...]}]``. A rules file weighs each changed file by its lines, so both shapes become
``paths`` (positive globs) and ``exclude_paths`` (negated ones); what that cannot say exactly (every file
must match, branch names) is kept as a note for the person who checks the file.
"""

from __future__ import annotations

from typing import Any

import yaml

from prdigest.classify.proposal.globs import GlobError, compile_glob
from prdigest.classify.proposal.named_areas import Area, add_area
from prdigest.kernel.errors import ConfigError

_V5_FILE_KEYS = ("any-glob-to-any-file", "any-glob-to-all-files", "all-globs-to-any-file", "all-globs-to-all-files")
_V5_KEYS = {"changed-files", "head-branch", "base-branch"}
_EVERY_FILE = {"all-globs-to-all-files": "every changed file", "any-glob-to-all-files": "every changed file"}


def _strings(value: Any, where: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise ConfigError(f"{where}: expected a glob or a list of globs, got {type(value).__name__}")


class _Reader:
    def __init__(self, label: str, where: str) -> None:
        self.area = Area(written=label, origin="labeler")
        self.where = where

    def glob(self, text: str, *, mode: str = "") -> None:
        self.area.written_patterns.append(f"{mode}: {text}" if mode else text)
        try:
            glob = compile_glob(text)
        except GlobError as exc:
            self.area.notes.append(f"glob {text!r} skipped: {exc}")
            return
        target = self.area.exclude_paths if glob.negated else self.area.paths
        if glob.regex not in target:
            target.append(glob.regex)

    def v4_item(self, item: Any) -> None:
        if isinstance(item, str):
            return self.glob(item)
        if isinstance(item, dict) and set(item) <= {"any", "all"}:
            for key, globs in item.items():
                for text in _strings(globs, f"{self.where}.{key}"):
                    self.glob(text, mode=key if key == "all" else "")
                if key == "all":
                    self._every_file("all:")
            return
        raise ConfigError(f"{self.where}: expected a glob, any: or all:, got {_shape(item)}")

    def v5_item(self, item: dict[str, Any]) -> None:
        for key, value in item.items():
            if key in ("any", "all"):
                if not isinstance(value, list):
                    raise ConfigError(f"{self.where}.{key}: expected a list of match objects")
                for sub in value:
                    if not isinstance(sub, dict):
                        raise ConfigError(f"{self.where}.{key}: expected a match object, got {_shape(sub)}")
                    self.v5_item(sub)
            elif key == "changed-files":
                options = value if isinstance(value, list) else [value]
                for option in options:
                    if not isinstance(option, dict) or not set(option) <= set(_V5_FILE_KEYS):
                        raise ConfigError(f"{self.where}.changed-files: expected one of {', '.join(_V5_FILE_KEYS)}"
                                          f", got {_shape(option)}")
                    for mode, globs in option.items():
                        for text in _strings(globs, f"{self.where}.changed-files.{mode}"):
                            self.glob(text, mode=mode)
                        if mode in _EVERY_FILE:
                            self._every_file(mode)
            elif key in ("head-branch", "base-branch"):
                branches = _strings(value, f"{self.where}.{key}")
                self.area.written_patterns.extend(f"{key}: {b}" for b in branches)
                self.area.notes.append(f"{key} {branches} is not mapped (a PR record has no branch names): "
                                       "PRs carrying the label are recognised by it")
                if self.area.written not in self.area.labels:
                    self.area.labels.append(self.area.written)
            else:
                raise ConfigError(f"{self.where}: unknown key '{key}' (labeler v5 knows changed-files, head-branch, "
                                  "base-branch, any, all)")

    def _every_file(self, mode: str) -> None:
        note = (f"{mode}: the labeler wants every changed file to match; here each matching file counts by its "
                "share of the PR's lines")
        if note not in self.area.notes:
            self.area.notes.append(note)


def _shape(value: Any) -> str:
    return f"keys {sorted(value)}" if isinstance(value, dict) else type(value).__name__


def _is_v5(items: list[Any]) -> bool:
    def v5(item: Any) -> bool:
        if not isinstance(item, dict):
            return False
        if set(item) & _V5_KEYS:
            return True
        return any(isinstance(v, list) and v and all(isinstance(x, dict) for x in v) for v in item.values())
    return any(v5(i) for i in items)


def read_labeler(text: str, path: str = ".github/labeler.yml") -> tuple[list[Area], str]:
    """The labeler file's areas in file order, and its shape (``v4`` or ``v5``); bad shapes raise
    :class:`ConfigError` naming the label."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ConfigError(f"{path}{f':{mark.line + 1}' if mark else ''}: invalid YAML") from None
    if data is None:
        return [], "v5"
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of label to rules, got {type(data).__name__}")
    areas: dict[str, Area] = {}
    shapes = set()
    for label, rules in data.items():
        where = f"{path}: label '{label}'"
        items = rules if isinstance(rules, list) else [rules]
        reader = _Reader(str(label), where)
        if _is_v5(items):
            shapes.add("v5")
            for item in items:
                if not isinstance(item, dict):
                    raise ConfigError(f"{where}: expected a match object (changed-files, head-branch, ...), got "
                                      f"{_shape(item)}")
                reader.v5_item(item)
        else:
            shapes.add("v4")
            for item in items:
                reader.v4_item(item)
        if not (reader.area.paths or reader.area.labels):
            # Nothing positive to match paths with: the label on the PR is the only evidence left.
            reader.area.notes.append("no usable positive glob: recognised by the label itself")
            reader.area.labels.append(reader.area.written)
        add_area(areas, reader.area)
    return list(areas.values()), "v5" if "v5" in shapes else "v4"
