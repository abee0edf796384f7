"""The cold index's fast paths give the rows of the plain one (prdigest/connect/impact/summaries.py, the walk of
prdigest/connect/impact/index.py): one content under two paths is read once and each path gets its own summary;
the walk that leaves names and operators on the tree refuses a file exactly at the depth cap; the garbage
collector is back on after, as it was."""

from __future__ import annotations

import gc
import shutil
from pathlib import Path

import pytest

from prdigest.connect.impact.downstream import DownstreamIndex, DownstreamSpec, clone_dir, clone_files, load_index
from prdigest.connect.impact.index import Use, resolve_uses, summarize
from prdigest.connect.impact.summaries import summarize_files
from prdigest.connect.impact.summary_cache import SummaryCache, content_key, decode, encode
from prdigest.kernel import safe_parse
from prdigest.state.store import open_store
from tests.git_support import commit, git
from tests.impact_support import build_world

UP = ("vllm",)


def test_a_package_copied_under_a_second_name_gets_the_rows_of_its_files_read_one_by_one(tmp_path: Path) -> None:
    world = build_world(tmp_path / "world")
    shutil.copytree(world.downstream / "ds", world.downstream / "ds_copy")
    git(world.downstream, "add", "-A")
    commit(world.downstream, "the package vendored under a second name")
    spec = DownstreamSpec("ascend", git=str(world.downstream), ref="main", packages=("ds", "ds_copy"))
    with open_store(tmp_path / "state.sqlite") as store:
        index = load_index(spec, UP, store=store, state_dir=tmp_path)
        warm = load_index(spec, UP, store=store, state_dir=tmp_path)
    files = list(clone_files(clone_dir(tmp_path, "ascend"), index.commit, ["ds", "ds_copy"]))
    assert len(files) > 4 and len({data for _, data in files}) < len(files)  # the same bytes under two paths
    one_by_one = resolve_uses([summarize(path, data, UP) for path, data in files], UP)
    rows = [u.row() for u in index.uses]
    assert rows == [u.row() for u in one_by_one] and [u.row() for u in warm.uses] == rows and warm.cached
    copied = {tuple(r[1:]) for r in rows if str(r[0]).startswith("ds_copy/")}
    assert copied and copied == {tuple(r[1:]) for r in rows if str(r[0]).startswith("ds/")}


def test_each_path_of_one_content_gets_its_own_module_and_its_own_lists() -> None:
    text = b"from vllm.x import Y\nclass A(Y):\n    def f(self):\n        Y.g(1)\n"
    (first, second), parsed = summarize_files([("ds/a.py", text), ("ds_copy/sub/__init__.py", text)], UP)
    assert parsed == 1
    assert (first.module, first.is_package) == ("ds.a", False)
    assert (second.path, second.module, second.is_package) == ("ds_copy/sub/__init__.py", "ds_copy.sub", True)
    assert second.calls == first.calls and second.calls is not first.calls
    assert second.defines == first.defines and second.defines is not first.defines
    assert summarize("ds_copy/sub/__init__.py", text, UP) == second


@pytest.mark.parametrize("leaf", ["y", "1"])
@pytest.mark.parametrize("below", [-2, -1, 0, 1, 2])
def test_a_file_is_refused_exactly_when_a_node_lies_past_the_depth_cap(leaf: str, below: int) -> None:
    # ``x = ---y``: every node is walked; the deepest is the name's Load ("y") or the constant ("1")
    levels = safe_parse.MAX_DEPTH + below
    nesting = levels - (4 if leaf == "y" else 3)
    source = "x = " + "-" * nesting + leaf + "\n"
    tree, _ = safe_parse.parse(source, max_depth=0)
    assert tree is not None and safe_parse.tree_depth(tree, 10 * levels) == levels
    summary = summarize("ds/deep.py", source, UP)
    assert bool(summary.error) == (levels > safe_parse.MAX_DEPTH), summary.error
    if summary.error:
        assert summary.error == safe_parse.too_deep()


@pytest.mark.parametrize("enabled", [True, False])
def test_the_garbage_collector_is_as_it_was_after_the_summaries(enabled: bool) -> None:
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        summarize_files([("ds/a.py", b"import vllm\n"), ("ds/b.py", b"def broken(:\n")], UP)
        assert gc.isenabled() is enabled
        with pytest.raises(TypeError):
            summarize_files([("ds/a.py", None)], UP)  # type: ignore[list-item]
        assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()


def test_an_index_is_read_back_as_written_a_string_the_c_encoder_refuses_too() -> None:
    uses = [Use("ds/a.py", 3, "vllm.x.Y", "calls", "kw=a;n=1", "Y", "A.f"), Use("ds/\u00e9.py", 1, "vllm", "imports")]
    for errors in (["ds/b.py: SyntaxError: invalid syntax (line 1)"], ["ds/\udcff.py: not UTF-8"]):
        index = DownstreamIndex("ascend", "c0ffee", 2, uses, errors)
        back = DownstreamIndex.from_data("ascend", "c0ffee", index.data())
        assert back is not None and back.cached and back.uses == uses and back.errors == errors


@pytest.mark.parametrize("row", [
    ["ds/a.py", 3, "vllm.x.Y", "calls", "kw=a;n=1", "Y", "A.f"],
    ["ds/a.py", "3", "vllm.x.Y", "calls", "kw=a;n=1", "Y", "A.f"],  # an older writer's types: converted
    ["ds/a.py", 3, "vllm.x.Y", "calls", "kw=a;n=1", None, "A.f"],
])
def test_a_cached_row_becomes_the_use_the_constructor_builds(row: list[object]) -> None:
    use = Use.from_row(row)
    built = Use("ds/a.py", 3, "vllm.x.Y", "calls", "kw=a;n=1", "Y" if row[5] else "None", "A.f")
    assert use == built and hash(use) == hash(built) and use.row() == built.row()
    with pytest.raises(AttributeError):  # still frozen
        use.line = 4  # type: ignore[misc]


def _commit_one_change(repo: Path) -> None:
    path = next(p for p in sorted((repo / "ds").rglob("*.py")) if "import" in p.read_text(encoding="utf-8"))
    path.write_text(path.read_text(encoding="utf-8") + "\n\ndef added(x):\n    return x.late_attribute\n",
                    encoding="utf-8")
    git(repo, "add", "-A")
    commit(repo, "one module changed")


def test_a_new_commit_parses_only_the_files_it_changed_and_gives_the_rows_of_a_fresh_index(tmp_path: Path) -> None:
    world = build_world(tmp_path / "world")
    spec = DownstreamSpec("ascend", git=str(world.downstream), ref="main", packages=("ds",))
    with open_store(tmp_path / "state.sqlite") as store:
        first = load_index(spec, UP, store=store, state_dir=tmp_path)
        _commit_one_change(world.downstream)
        second = load_index(spec, UP, store=store, state_dir=tmp_path)
    fresh = load_index(spec, UP, state_dir=tmp_path / "fresh")  # no store: every file parsed
    assert first.parsed == first.files > 2 and not second.cached and second.commit != first.commit
    assert second.parsed == 1 and fresh.parsed == fresh.files == second.files
    assert [u.row() for u in second.uses] == [u.row() for u in fresh.uses] and second.errors == fresh.errors
    assert any(u.symbol == ".late_attribute" for u in second.uses)


def test_a_kept_summary_reads_back_equal_to_the_files_own(tmp_path: Path) -> None:
    world = build_world(tmp_path / "world")
    files = sorted((p.relative_to(world.downstream).as_posix(), p.read_bytes())
                   for p in (world.downstream / "ds").rglob("*.py"))
    for path, data in files:
        summary = summarize(path, data, UP)
        assert decode(encode(summary), path) == summary, path
        assert decode(encode(summary), "other/" + path) == summarize("other/" + path, data, UP)


def test_a_damaged_kept_summary_is_parsed_again_and_another_upstream_keeps_its_own(state_location: str) -> None:
    text = b"from vllm.x import Y\nY.f = lambda: 0\nimport torch\ntorch.cuda.sync()\nTARGET = 'torch.cuda.sync'\n"
    with open_store(state_location) as store:  # SQLite and PostgreSQL
        cache = SummaryCache(store, UP)
        (first,), parsed = summarize_files([("ds/a.py", text)], UP, cache)
        assert parsed == 1 and cache.get_many([content_key(text)])
        assert summarize_files([("ds/b.py", text)], UP, cache)[1] == 0
        store.execute("UPDATE downstream_summary SET data = ?", ('{"imports": 3}',))
        (again,), parsed = summarize_files([("ds/a.py", text)], UP, cache)
        assert parsed == 1 and again == first
        assert summarize_files([("ds/a.py", text)], UP, cache)[1] == 0  # the damaged row replaced
        both = ("vllm", "torch")
        (torch,), parsed = summarize_files([("ds/a.py", text)], both, SummaryCache(store, both))
        assert parsed == 1 and ("torch.cuda.sync", 5) in torch.strings and ("torch.cuda.sync", 5) not in first.strings


def test_the_walk_reads_past_names_nones_and_constants_that_sit_beside_nodes() -> None:
    # ``global`` holds names, ``{**d}`` a None key, ``case True`` a bare constant, ``case P(x=…)`` a name list
    source = (
        "import vllm\n"
        "def f(d):\n"
        "    global state\n"
        "    merged = {**d, 'k': vllm.a.one()}\n"
        "    match d:\n"
        "        case True:\n"
        "            vllm.b.two()\n"
        "        case vllm.c.P(x=1):\n"
        "            vllm.d.three()\n"
    )
    summary = summarize("ds/walk.py", source, UP)
    assert not summary.error
    assert [(c, line) for c, line, _ in summary.calls] == [
        (("vllm", "a", "one"), 4), (("vllm", "b", "two"), 7), (("vllm", "d", "three"), 9)]
    assert (("vllm", "c", "P"), 8) in summary.reads


def test_a_method_calling_its_base_namesake_is_marked_and_one_that_does_not_is_not() -> None:
    source = (
        "from vllm.layers import Base\n"
        "class A(Base):\n"
        "    @decorated(forward=1)\n"
        "    def forward(self, x):\n"
        "        return super(\n"
        "            A, self).forward(x)\n"
        "    def step(self):\n"
        "        return self.forward(1)\n"
        "    def load(self, path):\n"
        "        Base.load(self, path)\n"
        "    def load_weights(self):\n"
        "        return Base.load_other(self)\n"
    )
    (cls,) = summarize("ds/a.py", source, UP).classes
    assert cls.supers == {"forward", "load"}
