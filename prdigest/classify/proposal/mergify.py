"""``.github/mergify.yml`` label rules as areas: the conditions of each rule whose actions add a label.

Conditions are mergify's: ``files~=REGEX`` (searched in each changed path, as a rules file's ``paths``),
``files=PATH``, ``title~=REGEX``, ``body~=REGEX``, ``label=NAME``, a leading ``-`` to negate, and the
``or:``/``any:``/``and:``/``all:``/``not:`` combinators. A regex that could backtrack badly is skipped
with a note (:func:`prdigest.classify.proposal.safety.regex_problem`); other conditions (base branch, counts,
authors) do not say what a PR is about and are ignored.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from prdigest.classify.proposal.named_areas import Area, add_area
from prdigest.classify.proposal.safety import regex_problem
from prdigest.kernel.errors import ConfigError

_CONDITION = re.compile(r"^\s*(?P<neg>-)?(?P<attr>[a-z][a-z-]*)\s*(?P<op>~=|=)\s*(?P<value>.+?)\s*$")
_GROUPS = {"or": False, "any": False, "and": False, "all": False, "not": True}


class _Conditions:
    """What one rule's conditions say about the PRs it labels."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.area = Area(written="", origin="mergify")

    def read(self, conditions: Any, *, negated: bool = False) -> None:
        if isinstance(conditions, str):
            return self._one(conditions, negated)
        if isinstance(conditions, list):
            for item in conditions:
                self.read(item, negated=negated)
            return
        if isinstance(conditions, dict):
            for key, value in conditions.items():
                if key not in _GROUPS:
                    raise ConfigError(f"{self.where}: unknown condition group '{key}' (or, and, any, all, not)")
                self.read(value, negated=negated != _GROUPS[key])
            return
        raise ConfigError(f"{self.where}: expected a condition, got {type(conditions).__name__}")

    def _one(self, text: str, negated: bool) -> None:
        match = _CONDITION.match(text)
        if not match:
            return  # "#files>0", "-closed", "base=main" and the like: not about what changed
        attr, op, value = match["attr"], match["op"], match["value"].strip("'\"")
        negated = negated != bool(match["neg"])
        if attr not in ("files", "title", "body", "label"):
            return
        self.area.written_patterns.append(("-" if negated else "") + f"{attr}{op}{value}")
        if attr == "label":
            if op == "=" and not negated:
                self.area.labels.append(value)
            return
        pattern = value if op == "~=" else "^" + re.escape(value) + "$"
        problem = regex_problem(pattern)
        if problem:
            self.area.notes.append(f"{attr}{op}{value!r} skipped: {problem}")
            return
        if attr == "files":
            (self.area.exclude_paths if negated else self.area.paths).append(pattern)
        elif negated:
            self.area.notes.append(f"-{attr}{op}{value!r} is not mapped (a rules file cannot exclude by {attr})")
        else:
            (self.area.titles if attr == "title" else self.area.body).append(pattern)


def _added_labels(actions: Any, where: str) -> list[str]:
    label = actions.get("label") if isinstance(actions, dict) else None
    if not isinstance(label, dict):
        return []
    added: list[str] = []
    for key in ("add", "toggle"):
        value = label.get(key) or []
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{where}: actions.label.{key} must be a list of label names")
        added += value
    return added


def read_mergify(text: str, path: str = ".github/mergify.yml") -> list[Area]:
    """Each label that a ``pull_request_rules`` entry adds, with the evidence of every rule adding it."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ConfigError(f"{path}{f':{mark.line + 1}' if mark else ''}: invalid YAML") from None
    rules = (data or {}).get("pull_request_rules", []) if isinstance(data, dict) else None
    if not isinstance(rules, list):
        raise ConfigError(f"{path}: pull_request_rules must be a list of rules")
    areas: dict[str, Area] = {}
    for i, rule in enumerate(rules):
        if not isinstance(rule, dict):
            raise ConfigError(f"{path}: pull_request_rules[{i}] must be a mapping")
        where = f"{path}: rule '{rule.get('name', i)}'"
        labels = _added_labels(rule.get("actions"), where)
        if not labels:
            continue
        reader = _Conditions(where)
        reader.read(rule.get("conditions") or [])
        for label in labels:
            area = Area(written=label, origin="mergify")
            area.merge(reader.area)
            area.labels = [x for x in area.labels if x.lower() != label.lower()]
            add_area(areas, area)
    for area in areas.values():
        if not (area.paths or area.titles or area.body or area.labels):
            area.notes.append("its rules name no files, title or label: recognised by the label itself")
            area.labels.append(area.written)
    return list(areas.values())
