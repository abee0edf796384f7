"""The run's ``--git`` clone as one handle: opened (and fetched) on first use, once per run, and shared by the
PR source (which then asks GitHub for no file list the clone gives) and the facts step."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

from prdigest.collect.git.clone import GitUnavailable, UpstreamClone, open_clone

log = logging.getLogger("prdigest.collect.facts.step")


class Upstream:
    """``upstream()``: the clone, or None (no ``--git``, or it could not be had: :attr:`problem` says why, and
    is logged once as a warning)."""

    def __init__(self, spec: str | None, home: Path) -> None:
        self.spec = spec
        self.home = home
        self.problem = ""
        self._opened = False
        self._clone: UpstreamClone | None = None

    def __call__(self) -> UpstreamClone | None:
        if not self._opened:
            self._opened = True
            if self.spec:
                try:
                    self._clone = open_clone(self.spec, state_dir=self.home)
                except GitUnavailable as exc:
                    self.problem = f"{exc}; code facts come from the REST patches"
                    log.warning("%s", self.problem)
        return self._clone


def present_commits(clone: UpstreamClone, shas: Iterable[str]) -> set[str]:
    """Which of ``shas`` are commits in the clone (one ``cat-file --batch-check``)."""
    wanted = sorted({s.lower() for s in shas if s})
    if not wanted:
        return set()
    out = clone.run(["cat-file", "--batch-check"], stdin="".join(f"{s}\n" for s in wanted).encode(),
                    what="cat-file --batch-check").decode("ascii", "replace").splitlines()
    return {asked for asked, line in zip(wanted, out) if line.split()[1:2] == ["commit"]}
