"""Never a false all-clear: a downstream whose configuration cannot be what its team meant is refused.

A ``path:`` that does not exist, a ``packages:`` entry with no Python file under it, or a downstream none of whose
files imports the upstream (a misspelled ``upstream:`` or ``packages:``) would otherwise be indexed as "nothing
uses the upstream" and every week would say "no upstream change affects it". Each is one line naming the
downstream, the field and what to fix, raised before anything is collected or sent.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from prdigest.connect.impact.downstream import DownstreamIndex, DownstreamSpec, _git, clone_dir, load_index
from prdigest.kernel.errors import DownstreamError
from prdigest.kernel.storage import Store

#: Said after every refusal: why the run stops instead of leaving the downstream out.
STOPPED = "stopped before anything was sent rather than report that nothing affects it"


def _has_python(top: Path) -> bool:
    if top.with_suffix(".py").is_file():
        return True
    for _dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and d != "__pycache__"]
        if any(name.endswith(".py") for name in filenames):
            return True
    return False


def _clone_paths(spec: DownstreamSpec, state_dir: Path, commit: str) -> list[str]:
    listing = _git(["ls-tree", "-r", "--name-only", "-z", commit], cwd=clone_dir(state_dir, spec.name),
                   what=f"downstream '{spec.name}'")
    return [p for p in listing.split("\0") if p.endswith(".py")]


def empty_packages(spec: DownstreamSpec, index: DownstreamIndex, state_dir: Path | None) -> list[str]:
    """The ``packages:`` entries of ``spec`` under which its commit holds no Python file."""
    if not spec.packages:
        return []
    if spec.path:
        root = Path(spec.path).expanduser()
        return [p for p in spec.packages if not _has_python(root / p.replace(".", "/"))]
    paths = _clone_paths(spec, state_dir or Path(".digest"), index.commit)
    tops = {p: p.replace(".", "/") for p in spec.packages}
    return [p for p, top in tops.items()
            if not any(path == top + ".py" or path.startswith(top + "/") for path in paths)]


def check_index(spec: DownstreamSpec, index: DownstreamIndex, where: str, state_dir: Path | None = None) -> None:
    """Raise :class:`DownstreamError` when ``index`` cannot be the downstream its team meant; ``where`` names the
    configuration it came from (``readers.yaml downstreams.ascend``, ``--package``)."""
    name = f"downstream '{spec.name}' ({where})"
    missing = empty_packages(spec, index, state_dir)
    if missing:
        listed = ", ".join(f"'{p}'" for p in missing)
        raise DownstreamError(f"{name}: packages: {listed} has no Python file at {index.commit[:12] or 'its checkout'}"
                              f" (a misspelled package?); {STOPPED}")
    if index.files == 0:
        what = "under packages " + ", ".join(spec.packages) if spec.packages else \
            "in any top-level package (a folder with __init__.py)"
        raise DownstreamError(f"{name}: no Python file {what}; set 'packages:' to its import packages; {STOPPED}")
    if not index.uses:
        upstream = ", ".join(index.upstream or spec.upstream) or "?"
        raise DownstreamError(f"{name}: none of its {index.files} Python files imports the upstream package(s) "
                              f"{upstream}; check 'upstream:' (the upstream's import packages) and 'packages:'; "
                              f"{STOPPED}")


def readable_index(spec: DownstreamSpec, upstream: Sequence[str], where: str, *, store: Store | None = None,
                   state_dir: Path | None = None) -> DownstreamIndex:
    """The downstream's index (:func:`load_index`), refused with one line when it cannot be what was meant."""
    try:
        index = load_index(spec, upstream, store=store, state_dir=state_dir)
    except DownstreamError as exc:
        raise DownstreamError(f"{exc} ({where}); {STOPPED}") from exc
    check_index(spec, index, where, state_dir)
    return index
