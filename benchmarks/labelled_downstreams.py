"""Labelled downstreams for benchmarks.impact_downstreams: a labels file (``benchmarks/data/downstream_impact*.json``)
and the downstream's git directory, read into what a run needs: its name, its import packages, its release pair.

A labels file says which upstream releases it spans (``upstream_before``, ``upstream_after``: the wheels
``vllm-<version>-*.whl`` of ``--wheels``), the downstream's commits ``d0`` and ``d1``, its ``adaptations`` and its
``package`` (one import package, or a list of them). Downstreams that share a release pair share one upstream
repository and one set of facts: :func:`by_pair` groups them, in the order given.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any


class LabelsError(ValueError):
    """A labels file that cannot be scored: the message names the file and the field."""


@dataclass(frozen=True)
class Labelled:
    """One labelled downstream: its name (the repository's, ``vllm-gaudi``), labels, git directory and packages."""

    name: str
    data: dict[str, Any]
    gitdir: Path
    packages: tuple[str, ...]
    source: Path

    @property
    def pair(self) -> tuple[str, str]:
        """The upstream release pair its labels span (``("0.19.1", "0.20.1")``)."""
        return self.data["upstream_before"], self.data["upstream_after"]


def _packages(value: object, source: Path) -> tuple[str, ...]:
    """``package`` as a tuple of import package names: a string, or a non-empty list of strings."""
    names = [value] if isinstance(value, str) else value if isinstance(value, list) else None
    if not names or not all(isinstance(n, str) and n.isidentifier() for n in names):
        raise LabelsError(f"{source}: 'package' must be an import package name or a list of them, got {value!r}")
    return tuple(dict.fromkeys(names))


def load_labelled(source: Path, gitdir: Path, name: str | None = None) -> Labelled:
    """The labels file ``source`` for the downstream whose git directory is ``gitdir``; ``name`` defaults to the
    last part of its ``downstream`` field (``vllm-project/vllm-gaudi`` → ``vllm-gaudi``), else the file's stem."""
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise LabelsError(f"{source}: cannot read the labels: {exc}") from exc
    if not isinstance(data, dict):
        raise LabelsError(f"{source}: the labels must be a JSON object")
    for key in ("upstream_before", "upstream_after", "d0", "d1"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise LabelsError(f"{source}: '{key}' is missing or not a string")
    if not isinstance(data.get("adaptations"), list):
        raise LabelsError(f"{source}: 'adaptations' is missing or not a list")
    if "package" not in data:
        raise LabelsError(f"{source}: 'package' is missing (the downstream's import package, or a list of them)")
    if not gitdir.is_dir():
        raise LabelsError(f"{source}: the downstream's git directory {gitdir} does not exist")
    repo = data.get("downstream")
    label = name or (repo.rsplit("/", 1)[-1] if isinstance(repo, str) and repo else source.stem)
    return Labelled(label, data, gitdir, _packages(data["package"], source), source)


def by_pair(downstreams: Iterable[Labelled]) -> dict[tuple[str, str], list[Labelled]]:
    """The downstreams grouped by release pair, pairs and downstreams in the order first given. A name given again
    for another release pair is scored as ``name before→after`` (``vllm-ascend 0.17.1→0.18.1``); given twice for
    one pair it is refused (its rows would be scored under one key)."""
    out: dict[tuple[str, str], list[Labelled]] = {}
    seen: dict[str, Labelled] = {}
    for d in downstreams:
        if d.name in seen:
            first = seen[d.name]
            if first.pair == d.pair:
                raise LabelsError(f"{d.source}: downstream {d.name!r} is given twice (also by {first.source})")
            d = replace(d, name=f"{d.name} {d.pair[0]}→{d.pair[1]}")
            if d.name in seen:
                raise LabelsError(f"{d.source}: downstream {d.name!r} is given twice (also by {seen[d.name].source})")
        seen[d.name] = d
        out.setdefault(d.pair, []).append(d)
    return out
