"""Uses through the upstream's class hierarchy across modules, calls on objects of unknown type, and patches through
any alias (issue 36): each case commits the upstream's change in a real git repository, reads its facts with and
without the upstream's whole tree (``--git``), indexes a downstream from its files, and matches."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from prdigest.collect.facts import Surface, commit_facts
from prdigest.collect.facts.hierarchy import METHOD_GONE, METHOD_GONE_CHANGED, METHOD_OUTSIDE, GitTree
from prdigest.collect.git import UpstreamClone, read_commits
from prdigest.connect.impact.index import resolve_uses, summarize
from prdigest.connect.impact.match import UseTable, match_changes
from prdigest.kernel.models import Change, Impact
from tests.git_support import commit, git, write

UP = ("up",)


def _dedent(files: dict[str, str | None]) -> dict[str, str | None]:
    return {p: textwrap.dedent(t).lstrip("\n") if t is not None else None for p, t in files.items()}


def facts(tmp_path: Path, before: dict[str, str | None], after: dict[str, str | None], *,
          tree: bool) -> list[Change]:
    """The facts of ``before`` → ``after`` committed in a real repository, read with its whole tree or not."""
    repo = tmp_path / ("with-tree" if tree else "files-alone")
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, _dedent(before))
    commit(repo, "before")
    write(repo, _dedent(after))
    sha = commit(repo, "after")
    clone = UpstreamClone(repo / ".git")
    diffs, _ = read_commits(clone, [sha])
    return commit_facts(diffs[sha], Surface(packages=UP), tree=GitTree(clone, UP) if tree else None)


def edit(files: dict[str, str | None], path: str, old: str, new: str = "") -> dict[str, str | None]:
    """``files[path]`` (dedented) with ``old`` replaced: the upstream's change."""
    text = textwrap.dedent(files[path] or "").lstrip("\n")
    assert old in text
    return {path: text.replace(old, new)}


def impacts(found: list[Change], downstream: dict[str, str]) -> list[Impact]:
    files = _dedent(downstream)  # type: ignore[arg-type]
    uses = resolve_uses([summarize(p, t or "", UP) for p, t in files.items()], UP)
    return match_changes(found, UseTable.of("ds", uses, UP), UP)


def line(text: str, marker: str) -> int:
    return next(i for i, row in enumerate(textwrap.dedent(text).lstrip("\n").splitlines(), 1) if marker in row)


def flagged(found: list[Impact], severity: str = "breaks") -> set[tuple[str, int, str]]:
    return {(i.path, i.line, i.how) for i in found if i.severity == severity}


BASE = {
    "up/__init__.py": "from up.core.base import Base\n",
    "up/core/__init__.py": "",
    "up/core/base.py": '''
        class Base:
            def run(self, x):
                return x
        ''',
    "up/layer.py": '''
        from up import Base


        class Layer(Base):
            def run(self, x):
                return x + 1

            def extra(self):
                return 2
        ''',
}
USER = '''
    from up.layer import Layer


    class Mine(Layer):
        def go(self):
            return self.run(1)

        def more(self):
            return self.extra()
    '''


def test_a_method_now_inherited_from_a_base_in_an_unchanged_module_is_no_removal(tmp_path: Path) -> None:
    # Layer.run goes; Layer still gets run from Base, in a module the commit did not touch (through up's re-export)
    after = edit(BASE, "up/layer.py", "    def run(self, x):\n        return x + 1\n\n")
    with_tree = facts(tmp_path, BASE, after, tree=True)
    assert ("body", "Layer.run", "now inherited from up.core.base.Base") in {
        (f.kind, f.symbol, f.detail) for f in with_tree}
    assert not flagged(impacts(with_tree, {"ds/__init__.py": "", "ds/use.py": USER}))


def test_without_the_tree_a_method_whose_base_was_not_read_is_a_check(tmp_path: Path) -> None:
    after = edit(BASE, "up/layer.py", "    def run(self, x):\n        return x + 1\n\n")
    alone = facts(tmp_path, BASE, after, tree=False)
    assert [(f.kind, f.symbol) for f in alone if f.symbol == "Layer.run"] == [("removed", "Layer.run")]
    found = impacts(alone, {"ds/__init__.py": "", "ds/use.py": USER})
    assert not flagged(found)
    assert ("ds/use.py", line(USER, "self.run(1)"), "calls") in flagged(found, "check")


def test_a_method_no_base_keeps_still_breaks_with_the_tree(tmp_path: Path) -> None:
    after = edit(BASE, "up/layer.py", "\n    def extra(self):\n        return 2\n")
    with_tree = facts(tmp_path, BASE, after, tree=True)
    assert ("removed", "Layer.extra") in {(f.kind, f.symbol) for f in with_tree}
    assert flagged(impacts(with_tree, {"ds/__init__.py": "", "ds/use.py": USER})) == {
        ("ds/use.py", line(USER, "self.extra()"), "calls")}


CAPTURE = {
    "up/__init__.py": "",
    "up/capture.py": '''
        class Capturer:
            def drain(self, limit=None):
                items, self.items = self.items, []
                return items

            def clear(self):
                self.items = {}

            def flush(self):
                return None
        ''',
    "up/other.py": '''
        class Other:
            def flush(self):
                return 1
        ''',
}
RUNNER = '''
    class Runner:
        def __init__(self, capturer):
            self.capturer = capturer

        def reset(self):
            self.capturer.drain()

        def wipe(self):
            self.capturer.clear()

        def done(self):
            self.capturer.flush()
    '''


DEFS = {"drain": "    def drain(self, limit=None):\n        items, self.items = self.items, []\n        return items\n\n",
        "clear": "    def clear(self):\n        self.items = {}\n\n", "flush": "\n    def flush(self):\n        return None\n"}


def _without(method: str) -> dict[str, str | None]:
    return edit(CAPTURE, "up/capture.py", DEFS[method])


def test_a_removed_method_called_on_an_object_of_unknown_type_breaks_when_no_upstream_class_keeps_it(
        tmp_path: Path) -> None:
    with_tree = facts(tmp_path, CAPTURE, _without("drain"), tree=True)
    assert ("removed", "Capturer.drain", METHOD_GONE) in {(f.kind, f.symbol, f.detail) for f in with_tree}
    found = impacts(with_tree, {"ds/__init__.py": "", "ds/runner.py": RUNNER})
    assert flagged(found) == {("ds/runner.py", line(RUNNER, "self.capturer.drain()"), "calls")}
    assert [(i.symbol, i.fact.split(";")[0]) for i in found] == [(".drain", "removed: Capturer.drain")]


def test_one_line_per_call_when_several_upstream_classes_lose_the_method(tmp_path: Path) -> None:
    before = {**CAPTURE, "up/other.py": '''
        class Other:
            def drain(self, limit=None):
                return []
        '''}
    after = {**_without("drain"), "up/other.py": "class Other:\n    pass\n"}
    with_tree = facts(tmp_path, before, after, tree=True)
    assert {f.symbol for f in with_tree if f.kind == "removed"} == {"Capturer.drain", "Other.drain"}
    found = impacts(with_tree, {"ds/__init__.py": "", "ds/runner.py": RUNNER})
    assert [(i.path, i.line, i.severity) for i in found] == [
        ("ds/runner.py", line(RUNNER, "self.capturer.drain()"), "breaks")]


def test_without_the_tree_a_method_called_on_an_unknown_object_is_a_check(tmp_path: Path) -> None:
    alone = facts(tmp_path, CAPTURE, _without("drain"), tree=False)
    assert ("removed", "Capturer.drain", METHOD_GONE_CHANGED) in {(f.kind, f.symbol, f.detail) for f in alone}
    found = impacts(alone, {"ds/__init__.py": "", "ds/runner.py": RUNNER})
    assert not flagged(found)
    assert flagged(found, "check") == {("ds/runner.py", line(RUNNER, "self.capturer.drain()"), "calls")}


def test_a_method_another_upstream_class_keeps_is_not_matched_by_name(tmp_path: Path) -> None:
    # Other.flush lives in a module the commit did not change: only the whole tree shows it
    with_tree = facts(tmp_path, CAPTURE, _without("flush"), tree=True)
    assert ("removed", "Capturer.flush", "") in {(f.kind, f.symbol, f.detail) for f in with_tree}
    assert impacts(with_tree, {"ds/__init__.py": "", "ds/runner.py": RUNNER}) == []


def test_a_method_the_downstream_defines_itself_is_not_matched_by_name(tmp_path: Path) -> None:
    own = RUNNER + '''

    class Local:
        def drain(self, limit=None):
            return None
    '''
    with_tree = facts(tmp_path, CAPTURE, _without("drain"), tree=True)
    assert impacts(with_tree, {"ds/__init__.py": "", "ds/runner.py": own}) == []


def test_a_builtin_method_name_called_on_an_object_of_unknown_type_is_only_a_check(tmp_path: Path) -> None:
    # ``self.capturer.clear()`` may as well be a dict's clear: the name alone never proves the break
    with_tree = facts(tmp_path, CAPTURE, _without("clear"), tree=True)
    assert ("removed", "Capturer.clear", METHOD_GONE) in {(f.kind, f.symbol, f.detail) for f in with_tree}
    found = impacts(with_tree, {"ds/__init__.py": "", "ds/runner.py": RUNNER})
    assert not flagged(found)
    assert flagged(found, "check") == {("ds/runner.py", line(RUNNER, "self.capturer.clear()"), "calls")}


TENSORS = {
    "up/__init__.py": "",
    "up/bits.py": '''
        class Bitmatrix:
            def sum(self, dim=0):
                return 0
        ''',
    "up/layer.py": '''
        def routed(weights):
            return weights.sum(dim=-1)
        ''',
}
REDUCER = '''
    class Reducer:
        def __init__(self, capturer):
            self.capturer = capturer

        def total(self, logits):
            return logits.sum(dim=-1)

        def reset(self):
            self.capturer.drain()
    '''


@pytest.mark.parametrize("tree", [True, False])
def test_a_removed_method_the_upstream_still_calls_on_other_types_is_not_matched_by_name(
        tmp_path: Path, tree: bool) -> None:
    """Failed before (vLLM 0.16.0 -> 0.17.1, held out): ``Bitmatrix.sum`` went, no upstream class defines a ``sum``,
    and every ``x.sum()`` of a downstream (a tensor's) was flagged breaks. The upstream still calls ``.sum()`` on
    its own tensors: the name belongs to a type from outside it, and a call by name proves nothing."""
    after = {"up/bits.py": "class Bitmatrix:\n    pass\n"}
    found_facts = facts(tmp_path, TENSORS if tree else {**TENSORS}, after, tree=tree)
    details = {(f.kind, f.symbol): f.detail for f in found_facts}
    assert details[("removed", "Bitmatrix.sum")] == METHOD_OUTSIDE if tree else METHOD_OUTSIDE not in details[
        ("removed", "Bitmatrix.sum")]
    found = impacts(found_facts, {"ds/__init__.py": "", "ds/reducer.py": REDUCER})
    if tree:
        assert found == []
    else:  # only the changed file was read: it calls no ``.sum()``, so the name stays a check, never a break
        assert not flagged(found)


def test_a_removed_method_the_changed_files_still_call_on_other_types_is_not_matched_without_the_tree(
        tmp_path: Path) -> None:
    before = {**TENSORS, "up/bits.py": "class Bitmatrix:\n    def sum(self, dim=0):\n        return 0\n\n\n"
                                       "def count(m):\n    return m.sum()\n"}
    after = {"up/bits.py": "class Bitmatrix:\n    pass\n\n\ndef count(m):\n    return m.sum()\n"}
    alone = facts(tmp_path, before, after, tree=False)
    assert ("removed", "Bitmatrix.sum", METHOD_OUTSIDE) in {(f.kind, f.symbol, f.detail) for f in alone}
    assert impacts(alone, {"ds/__init__.py": "", "ds/reducer.py": REDUCER}) == []


def test_a_removed_method_nothing_upstream_calls_any_more_still_breaks_beside_tensor_calls(tmp_path: Path) -> None:
    with_tree = facts(tmp_path, {**CAPTURE, **TENSORS}, _without("drain"), tree=True)
    assert ("removed", "Capturer.drain", METHOD_GONE) in {(f.kind, f.symbol, f.detail) for f in with_tree}
    found = impacts(with_tree, {"ds/__init__.py": "", "ds/reducer.py": REDUCER})
    assert flagged(found) == {("ds/reducer.py", line(REDUCER, "self.capturer.drain()"), "calls")}


def test_a_renamed_method_called_on_an_object_of_unknown_type_breaks(tmp_path: Path) -> None:
    after = edit(CAPTURE, "up/capture.py", "def drain(", "def empty(")
    with_tree = facts(tmp_path, CAPTURE, after, tree=True)
    assert ("renamed", "Capturer.empty", f"Capturer.drain→Capturer.empty ({METHOD_GONE})") in {
        (f.kind, f.symbol, f.detail) for f in with_tree}
    found = impacts(with_tree, {"ds/__init__.py": "", "ds/runner.py": RUNNER})
    assert flagged(found) == {("ds/runner.py", line(RUNNER, "self.capturer.drain()"), "calls")}


PATCHED = {
    "up/__init__.py": "",
    "up/base.py": '''
        class Base:
            def helper(self):
                return 1


        def scale(x):
            return x
        ''',
}


def test_patches_through_any_alias_are_seen(tmp_path: Path) -> None:
    after = {"up/base.py": '''
        class Base:
            def helper(self, mode):
                return 1


        def scale(x, y):
            return x
        '''}
    downstream = '''
        import importlib

        from up import base as imported

        N = imported
        mod = importlib.import_module("up.base")


        def mine(x):
            return x


        def install():
            setattr(N.Base, "helper", lambda self: 2)
            mod.scale = mine
        '''
    found = impacts(facts(tmp_path, PATCHED, after, tree=True), {"ds/__init__.py": "", "ds/patch.py": downstream})
    assert {("ds/patch.py", line(downstream, "setattr(N.Base"), "patches"),
            ("ds/patch.py", line(downstream, "mod.scale = mine"), "patches")} <= flagged(found)


def test_a_data_attribute_still_set_by_a_base_in_an_unchanged_module_is_no_removal(tmp_path: Path) -> None:
    before = {"up/__init__.py": "", "up/core.py": '''
        class Core:
            def __init__(self):
                self.size = 0
        ''', "up/layer.py": '''
        from up.core import Core


        class Layer(Core):
            def __init__(self):
                super().__init__()
                self.size = 1
                self.name = "layer"
        '''}
    after = edit(before, "up/layer.py", "        self.size = 1\n")
    reader = '''
        def size_of(layer):
            return layer.size
        '''
    found = facts(tmp_path, before, after, tree=True)
    assert not [f for f in found if f.kind == "attribute"]
    assert impacts(found, {"ds/__init__.py": "", "ds/read.py": reader}) == []
    alone = facts(tmp_path, before, after, tree=False)  # only the changed files: Core is not read
    assert ("attribute", "Layer.size") in {(f.kind, f.symbol) for f in alone}


@pytest.mark.parametrize("imports, base", [
    ("from up.core import base", "base.Base"),
    ("import up.core.base as b", "b.Base"),
    ("import up.core.base", "up.core.base.Base"),
    ("from .core.base import Base", "Base"),
])
def test_a_base_named_through_a_module_is_followed(tmp_path: Path, imports: str, base: str) -> None:
    before = {**BASE, "up/layer.py": f"{imports}\n\n\nclass Layer({base}):\n    def run(self, x):\n"
                                     "        return x + 1\n\n    def extra(self):\n        return 2\n"}
    after = edit(before, "up/layer.py", "    def run(self, x):\n        return x + 1\n\n")
    assert ("body", "Layer.run", "now inherited from up.core.base.Base") in {
        (f.kind, f.symbol, f.detail) for f in facts(tmp_path, before, after, tree=True)}
