"""Load a YAML file into a pydantic model, with errors that name the file, the line and the field."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from prdigest.kernel.errors import ConfigError, first_problem

M = TypeVar("M", bound=BaseModel)
#: libyaml's safe loader when PyYAML was built with it: a rules file parses in a tenth of the time, which a
#: command that checks its configuration before anything else starts feels.
FAST_LOADER: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _node_line(root: yaml.Node | None, loc: tuple[int | str, ...]) -> int | None:
    """The 1-based line of the YAML node at ``loc`` (or of its nearest existing parent)."""
    node, line = root, (root.start_mark.line + 1 if root is not None else None)
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            match = next((v for k, v in node.value if getattr(k, "value", None) == part), None)
            if match is None:
                # An unknown key: point at the key itself when it exists.
                key = next((k for k, _ in node.value if getattr(k, "value", None) == part), None)
                return key.start_mark.line + 1 if key is not None else line
            node = match
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            break
        line = node.start_mark.line + 1
    return line


def load_yaml_model(path: Path, model: type[M], *, what: str) -> M:
    """Parse ``path`` as YAML and validate it as ``model``; raise :class:`ConfigError` naming the line."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: {what} file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read {what} file: {exc}") from exc
    try:
        try:
            data = yaml.load(text, Loader=FAST_LOADER)  # a safe loader (libyaml's when installed)
        except yaml.YAMLError:  # parsed again by PyYAML's own parser, whose message and line we report
            data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"{path}{where}: invalid YAML in {what} file: {problem}") from exc
    try:
        return model.model_validate(data if data is not None else {})
    except ValidationError as exc:
        problem = first_problem(exc, empty="(top level)")
        line = _node_line(yaml.compose(text, Loader=yaml.SafeLoader), problem.loc)  # the nodes only to name the line
        where = f":{line}" if line else ""
        raise ConfigError(f"{path}{where}: {what} field '{problem.field}': {problem.message}"
                          f"{problem.and_more('problem(s)')}") from None


#: The line of a node below a part of a file composed on its own (:mod:`prdigest.readers.stream`).
node_line = _node_line
