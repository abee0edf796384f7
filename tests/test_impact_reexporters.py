"""A changed name reached through another upstream package's re-export (issue 36): ``up.attention`` re-exports
``up.layers.attention.Attention`` (not a package above it), ``up.compat`` re-exports it from ``up.attention``, and
the downstream imports it from either. The upstream's change is committed in a real git repository and read with
and without its whole tree."""

from __future__ import annotations

from pathlib import Path

from prdigest.collect.facts import Surface, commit_facts
from prdigest.collect.facts.hierarchy import GitTree
from prdigest.collect.git import UpstreamClone, read_commits
from prdigest.connect.impact.index import resolve_uses, summarize
from prdigest.connect.impact.match import UseTable, match_changes
from prdigest.kernel.models import Change, Impact
from tests.git_support import commit, git, write

UP = ("up",)
LAYER = "class Attention:\n    def forward(self, q, k):\n        return q\n"
BASE = {"up/__init__.py": "", "up/layers/__init__.py": "", "up/layers/attention.py": LAYER,
        "up/attention/__init__.py": "from up.layers.attention import Attention\n\n__all__ = ['Attention']\n",
        "up/compat/__init__.py": "from up.attention import Attention\nfrom up.layers.attention import Attention as A\n",
        "up/other/__init__.py": "import os\n"}
AFTER = {"up/layers/attention.py": LAYER.replace("def forward(self, q, k):", "def forward(self, q, k, v):")}
DOWNSTREAM = {
    "ds/__init__.py": "",
    "ds/attn.py": "from up.attention import Attention\n\n\nclass Mine(Attention):\n    def forward(self, q, k):\n"
                  "        return q\n",
    "ds/compat.py": "from up.compat import Attention\n\n\ndef run(obj, q, k):\n    return Attention.forward(obj, q=q, k=k)\n",
    "ds/apart.py": "from up.other import Attention\n\n\nclass Yours(Attention):\n    def forward(self, q, k):\n"
                   "        return q\n",
}


def _facts(tmp_path: Path, *, tree: bool) -> list[Change]:
    repo = tmp_path / ("with-tree" if tree else "files-alone")
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, BASE)
    commit(repo, "before")
    write(repo, AFTER)
    sha = commit(repo, "after")
    clone = UpstreamClone(repo / ".git")
    diffs, _ = read_commits(clone, [sha])
    return commit_facts(diffs[sha], Surface(packages=UP), tree=GitTree(clone, UP) if tree else None)


def _matched(facts: list[Change]) -> list[Impact]:
    uses = resolve_uses([summarize(p, t, UP) for p, t in DOWNSTREAM.items()], UP)
    return match_changes(facts, UseTable.of("ds", uses, UP), UP)


def test_a_changed_name_says_which_other_packages_re_export_it(tmp_path: Path) -> None:
    sig = [f for f in _facts(tmp_path, tree=True) if f.kind == "signature"]
    # up.compat's second import binds another name (A): only its re-export of up.attention's counts
    assert [(f.symbol, f.reexported_by) for f in sig] == [("Attention.forward", ("up.attention", "up.compat"))]


def test_uses_through_a_re_exporting_package_break(tmp_path: Path) -> None:
    impacts = _matched(_facts(tmp_path, tree=True))
    got = sorted((i.path, i.line, i.severity) for i in impacts)
    # the override through up.attention and the call through up.compat; up.other re-exports nothing
    assert got == [("ds/attn.py", 5, "breaks"), ("ds/compat.py", 5, "breaks")]
    assert all("re-exported by" in i.fact for i in impacts)


def test_without_the_tree_unchanged_packages_are_not_read(tmp_path: Path) -> None:
    facts = [f for f in _facts(tmp_path, tree=False) if f.kind == "signature"]
    assert facts and not facts[0].reexported_by and _matched(facts) == []
