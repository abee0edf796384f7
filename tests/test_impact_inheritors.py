"""A method changed on an upstream base reaches a downstream through the classes that inherit it (issue 36): the
downstream overrides ``Child.f`` where ``Child(Base)`` lives in another, unchanged module and ``Base.f`` changed.
The upstream's change is committed in a real git repository and read with and without its whole tree."""

from __future__ import annotations

import textwrap
from pathlib import Path

from prdigest.collect.facts import Surface, commit_facts
from prdigest.collect.facts.hierarchy import GitTree
from prdigest.collect.git import UpstreamClone, read_commits
from prdigest.connect.impact.index import resolve_uses, summarize
from prdigest.connect.impact.match import UseTable, match_changes
from prdigest.kernel.models import Change, Impact
from tests.git_support import commit, git, write

UP = ("up",)
BASE = {"up/__init__.py": "",
        "up/base.py": "class Base:\n    def forward(self, x):\n        return x\n\n    def keep(self):\n        return 1\n",
        "up/child.py": "from up.base import Base\n\n\nclass Child(Base):\n    def other(self):\n        return 2\n",
        "up/grand.py": "from up import child\n\n\nclass Grand(child.Child):\n    pass\n",
        "up/own.py": "from up.base import Base\n\n\nclass Own(Base):\n    def forward(self, x, scale=1):\n"
                     "        return x * scale\n"}
#: only the base's module changes: ``forward`` now requires ``scale``
AFTER = {"up/base.py": BASE["up/base.py"].replace("def forward(self, x):", "def forward(self, x, scale):")}
DOWNSTREAM = {
    "ds/__init__.py": "",
    "ds/mine.py": "from up.child import Child\nfrom up.grand import Grand\nfrom up.own import Own\n\n\n"
                  "class Mine(Child):\n    def forward(self, x):\n        return x\n\n\n"
                  "class Deeper(Grand):\n    def forward(self, x):\n        return x\n\n\n"
                  "class Apart(Own):\n    def forward(self, x):\n        return x\n",
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
    uses = resolve_uses([summarize(p, textwrap.dedent(t), UP) for p, t in DOWNSTREAM.items()], UP)
    return match_changes(facts, UseTable.of("ds", uses, UP), UP)


def test_a_changed_base_method_names_the_classes_that_inherit_it(tmp_path: Path) -> None:
    sig = [f for f in _facts(tmp_path, tree=True) if f.kind == "signature"]
    assert [(f.symbol, f.inherited_by) for f in sig] == [("Base.forward", ("up.child.Child", "up.grand.Grand"))]


def test_an_override_of_an_inherited_method_breaks_through_its_class(tmp_path: Path) -> None:
    impacts = _matched(_facts(tmp_path, tree=True))
    got = sorted((i.line, i.symbol, i.severity) for i in impacts)
    # Mine overrides Child.forward, Deeper overrides Grand.forward: both are Base.forward, now requiring scale;
    # Apart overrides Own.forward, Own's own method (unchanged), so nothing
    assert got == [(7, "up.child.Child.forward", "breaks"), (12, "up.grand.Grand.forward", "breaks")]
    assert all("inherited by" in i.fact for i in impacts)


def test_without_the_tree_only_the_changed_files_are_searched(tmp_path: Path) -> None:
    facts = [f for f in _facts(tmp_path, tree=False) if f.kind == "signature"]
    assert facts and not facts[0].inherited_by
    assert _matched(facts) == []


#: the base no longer sets ``offloaded_block_size``; ``CPUSpec`` inherits it, ``OwnSpec`` sets its own
SPEC = {"up/__init__.py": "",
        "up/spec.py": "class Spec:\n    def __init__(self, n):\n        self.block_size = n\n"
                      "        self.offloaded_block_size = n * 2\n",
        "up/cpu.py": "from up.spec import Spec\n\n\nclass CPUSpec(Spec):\n    def handlers(self):\n        return []\n",
        "up/own.py": "from up.spec import Spec\n\n\nclass OwnSpec(Spec):\n    def __init__(self, n):\n"
                     "        super().__init__(n)\n        self.offloaded_block_size = 8\n"}
SPEC_AFTER = {"up/spec.py": SPEC["up/spec.py"].replace("        self.offloaded_block_size = n * 2\n", "")}
#: a patch installs a function on each subclass that reads the attribute through ``self``
PATCHED = '''from up.cpu import CPUSpec
from up.own import OwnSpec


def get_handlers(self):
    return self.offloaded_block_size


def own_handlers(self):
    return self.offloaded_block_size


CPUSpec.handlers = get_handlers
OwnSpec.handlers = own_handlers
'''


def test_a_data_attribute_the_base_no_longer_sets_breaks_a_read_through_a_class_inheriting_it(tmp_path: Path) -> None:
    repo = tmp_path / "upstream"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, SPEC)
    commit(repo, "before")
    write(repo, SPEC_AFTER)
    sha = commit(repo, "after")
    clone = UpstreamClone(repo / ".git")
    diffs, _ = read_commits(clone, [sha])
    facts = commit_facts(diffs[sha], Surface(packages=UP), tree=GitTree(clone, UP))
    [gone] = [f for f in facts if f.kind == "attribute" and f.symbol == "Spec.offloaded_block_size"]
    assert gone.inherited_by == ("up.cpu.CPUSpec",)
    uses = resolve_uses([summarize("ds/__init__.py", "", UP), summarize("ds/patch.py", PATCHED, UP)], UP)
    found = match_changes(facts, UseTable.of("ds", uses, UP), UP)
    assert [(i.line, i.severity, i.symbol) for i in found if "offloaded_block_size" in i.symbol] == [
        (6, "breaks", "up.cpu.CPUSpec.offloaded_block_size")]
