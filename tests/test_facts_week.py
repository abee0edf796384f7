"""A week's code facts from a real repository (tests/git_support.py): each fact found and nothing invented,
the same week without git (from the REST patches, marked), cached by commit, and a clone that fails is one
line while the week goes on."""

from __future__ import annotations

import logging
import re
import shutil
from pathlib import Path

import pytest

from prdigest.collect.facts import FactsCache, Surface, breaking_facts, is_breaking, week_facts
from prdigest.collect.git import UpstreamClone, open_clone
from prdigest.kernel.models import Change
from prdigest.state.store import open_store
from tests.git_support import EXPECTED, Upstream, build_upstream, git

SURFACE = Surface(env_files=(r"^pkg/envs\.py$",), argument_files=(r"^pkg/args\.py$",),
                  argument_classes=("EngineArgs",), config_files=(r"^pkg/config\.py$",))


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Upstream:
    return build_upstream(tmp_path_factory.mktemp("week"))


def _triples(changes: list[Change]) -> set[tuple[str, str, str]]:
    return {(c.kind, c.symbol, c.detail) for c in changes}


def test_each_fact_of_the_week_is_found_and_nothing_else(upstream: Upstream, tmp_path: Path) -> None:
    week = week_facts(upstream.prs, surface=SURFACE, clone=open_clone(upstream.url, state_dir=tmp_path))
    assert week.problems == []
    for pr in upstream.prs:
        assert week.source[pr.number] == "git"
        assert _triples(week.changes[pr.number]) == EXPECTED[pr.number], pr.number


def test_every_symbol_is_written_in_the_file_before_or_after(upstream: Upstream, tmp_path: Path) -> None:
    week = week_facts(upstream.prs, surface=SURFACE, clone=open_clone(upstream.url, state_dir=tmp_path))
    for pr in upstream.prs:
        sha = upstream.commits[pr.number]
        for fact in week.changes[pr.number]:
            texts = ""
            for rev, path in ((sha, fact.path), (f"{sha}^1", fact.path), (f"{sha}^1", fact.before)):
                try:
                    texts += git(upstream.path, "show", f"{rev}:{path}")
                except Exception:  # the path is absent on that side
                    continue
            if not fact.kind.startswith("file-"):
                assert all(part in texts for part in re.split(r"\.(?!\w*/)|::", fact.symbol)), fact
            assert fact.line == 0 or fact.line <= len(texts.splitlines()), fact


def test_details_name_what_changed_in_the_signature(upstream: Upstream, tmp_path: Path) -> None:
    week = week_facts(upstream.prs, surface=SURFACE, clone=open_clone(upstream.url, state_dir=tmp_path))
    spec = next(c for c in week.changes[101] if c.kind == "signature")
    assert (spec.path, spec.before, spec.after) == ("pkg/layers.py", "(self, block_size=16)",
                                                    "(self, layer_names, block_size=32)")
    moved = next(c for c in week.changes[102] if c.symbol == "moved_func")
    assert (moved.before, moved.after, moved.path) == ("pkg.layers", "pkg.ops.moved", "pkg/ops/moved.py")
    torch = next(c for c in week.changes[103] if c.symbol == "torch")
    assert (torch.before, torch.after) == ("==2.5.0", "==2.6.0")
    kernel = next(c for c in week.changes[104] if c.symbol == "rms_kernel")
    assert kernel.language == "cuda" and kernel.after.endswith("int n, float eps)")


def test_breaking_is_a_public_removal_rename_move_signature_or_a_removed_setting(upstream: Upstream,
                                                                                tmp_path: Path) -> None:
    week = week_facts(upstream.prs, surface=SURFACE, clone=open_clone(upstream.url, state_dir=tmp_path))
    # 104 changes the C++ signature of rms_norm (+eps, no default), which the docs name: a C++ caller breaks.
    # Each is public because pkg/__init__.py exports it or docs/api.md names it (tests/test_facts_reach.py).
    assert {n for n, changes in week.changes.items() if is_breaking(changes)} == {101, 102, 103, 104, 105}
    assert {(c.kind, c.symbol) for c in breaking_facts(week.changes[103])} == {
        ("env", "PKG_OLD_FLAG"), ("argument", "EngineArgs.block_size")}


def test_without_git_the_same_week_comes_from_the_patches_marked_partial(upstream: Upstream) -> None:
    week = week_facts(upstream.prs, surface=SURFACE, clone=None)
    assert set(week.source.values()) == {"patches"} and week.computed == 0
    by_pr = {n: _triples(c) for n, c in week.changes.items()}
    # the method named with its class, which the hunk's header shows (as the git facts name it)
    assert ("signature", "FusedMoE.get_kv_cache_spec", "+layer_names, block_size=16→32") in by_pr[101]
    assert {("env", "PKG_NEW_FLAG", "added"), ("dependency", "torch", "changed")} <= by_pr[103]
    assert ("file-deleted", "pkg/legacy.py", "") in by_pr[105] and by_pr[106] == set()
    for pr in upstream.prs:  # nothing a patch does not show
        patch = "\n".join((f.patch or "") + f.path for f in pr.files)
        for fact in week.changes[pr.number]:
            assert all(part in patch for part in fact.symbol.split(".") if part != "*"), fact


def test_a_warm_run_computes_no_fact(upstream: Upstream, tmp_path: Path) -> None:
    clone = open_clone(upstream.url, state_dir=tmp_path)
    with open_store(tmp_path / "state.sqlite") as store:
        cold = week_facts(upstream.prs, surface=SURFACE, clone=clone, cache=FactsCache(store))
        commands = clone.commands
        warm = week_facts(upstream.prs, surface=SURFACE, clone=clone, cache=FactsCache(store))
        assert (cold.computed, cold.cached) == (len(upstream.prs), 0)
        assert (warm.computed, warm.cached) == (0, len(upstream.prs))
        assert clone.commands == commands  # not one git command
        assert warm.changes == cold.changes and set(warm.source.values()) == {"git"}
        other = Surface()  # another code section: computed again, not served from the first one's rows
        assert week_facts(upstream.prs[:1], surface=other, clone=clone, cache=FactsCache(store)).computed == 1


def test_a_commit_missing_from_the_clone_is_one_line_and_comes_from_its_patches(
        upstream: Upstream, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    local = tmp_path / "local"
    shutil.copytree(upstream.path, local)
    stranger = upstream.prs[0].model_copy(update={"number": 999, "merge_commit": "ab" * 20})
    with caplog.at_level(logging.WARNING, logger="prdigest.collect.facts"):
        week = week_facts([*upstream.prs, stranger], surface=SURFACE, clone=open_clone(str(local), state_dir=tmp_path))
    assert week.source[999] == "patches" and week.source[101] == "git"
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1 and "#999 abababab" in lines[0] and "REST patches" in lines[0]


def test_an_unreadable_clone_is_one_line_and_the_week_goes_on_from_the_patches(
        upstream: Upstream, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    gone = UpstreamClone(tmp_path / "vanished.git")
    with caplog.at_level(logging.WARNING, logger="prdigest.collect.facts"):
        week = week_facts(upstream.prs, surface=SURFACE, clone=gone)
    assert set(week.source.values()) == {"patches"}
    assert ("file-deleted", "pkg/legacy.py", "") in _triples(week.changes[105])
    assert len(caplog.records) == 1 and "\n" not in caplog.records[0].getMessage()
    assert "vanished.git" in caplog.records[0].getMessage()
