"""Affects your code, end to end: a real upstream and a real downstream (git repositories made here), the facts
engine on the upstream's merge commits, ``digest impact`` and its exit codes, a full run whose plugin team gets
the block first in every medium, the archive without it, the index cached by commit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prdigest.connect.impact.downstream import DownstreamSpec, load_index
from prdigest.kernel.errors import ConfigError
from prdigest.pipeline.impact_report import impact_report
from prdigest.readers.file import load_readers
from prdigest.state.store import open_store
from tests.git_support import commit, write
from tests.impact_support import build_world, line_of, readers_yaml


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory):
    return build_world(tmp_path_factory.mktemp("impact"))


def _cli():
    from flows.cli import app

    return app


def _report(world, tmp_path: Path, **flags):
    return impact_report(downstream=world.downstream, source=f"jsonl:{world.jsonl}", name="ascend",
                         state=str(tmp_path / "state.sqlite"), language="en", **flags)


def _by_pr(report) -> dict[int, set[tuple[str, int, str, str]]]:
    return {e.number: {(i.path, i.line, i.how, i.severity) for i in e.impact} for e in report.edition.entries}


def test_git_facts_hit_every_use_the_week_touches_and_nothing_else(world, tmp_path):
    report = _report(world, tmp_path, git=str(world.upstream))
    got = _by_pr(report)
    moe, patch = "ds/ops/fused_moe.py", "ds/patch.py"
    forward = (moe, line_of(world, moe, "def forward"), "overrides", "breaks")
    assert got[101] == {forward}  # a removed parameter of an overridden method
    # The rename hits the alias (UpstreamMoE), the re-export through ds.compat and the subclass's method; the
    # subclass statement is at the module level of a file whose import already says it (one flag per function).
    assert got[102] == {("ds/compat.py", 1, "imports", "breaks"), (moe, 2, "imports", "breaks"), forward,
                        (patch, line_of(world, patch, "from ds.compat"), "imports", "breaks")}
    assert got[103] == {(patch, line_of(world, patch, "layer.select_experts ="), "patches", "check")}
    assert got[104] == {("ds/attention.py", line_of(world, "ds/attention.py", "class AscendBackend"), "subclasses",
                         "breaks")}  # a new abstract method it does not define: it can no longer be made
    # A patch target written as a string.
    assert got[105] == {(patch, line_of(world, patch, "PATCHES ="), "patches", "breaks")}
    assert got[106] == {(moe, line_of(world, moe, "return cdiv(n)"), "calls", "check")}
    # Negatives: a docs change; a same-named function of another package; a private helper with a namesake.
    assert got[107] == got[108] == set()
    hows = {i.how for e in report.edition.entries for i in e.impact}
    assert hows == {"imports", "subclasses", "overrides", "patches", "calls"}
    assert not any(i.partial for e in report.edition.entries for i in e.impact)
    renamed = next(i for e in report.edition.entries if e.number == 102 for i in e.impact if i.path == moe
                   and i.how == "imports")
    assert renamed.fact == "renamed: FusedMoE → FusedMoEFactory" and renamed.number == 102


def test_without_git_the_patches_give_partial_impacts(world, tmp_path):
    report = _report(world, tmp_path)
    got = _by_pr(report)
    moe = "ds/ops/fused_moe.py"
    assert (moe, line_of(world, moe, "def forward"), "overrides", "breaks") in got[101]
    assert (moe, 2, "imports", "breaks") in got[102]
    assert got[107] == got[108] == set()
    impacts = [i for e in report.edition.entries for i in e.impact]
    assert impacts and all(i.partial for i in impacts)


def test_digest_impact_prints_the_report_and_exits_1_when_something_breaks(world, tmp_path):
    result = CliRunner().invoke(_cli(), ["impact", "--downstream", str(world.downstream), "--source",
                                         f"jsonl:{world.jsonl}", "--git", str(world.upstream), "--name", "ascend",
                                         "--language", "en", "--state", str(tmp_path / "s.sqlite")])
    assert result.exit_code == 1, result.output
    output = " ".join(result.output.split())  # the report is wrapped at 78 columns
    assert "`ds/ops/fused_moe.py:2` imports `FusedMoE`, renamed to `FusedMoEFactory` in #102" in output
    assert "Affects your code · ascend" in output


def test_digest_impact_exits_0_and_says_so_when_nothing_touches_the_downstream(world, tmp_path):
    # Only the docs PR (#107) is merged in this window.
    result = CliRunner().invoke(_cli(), ["impact", "--downstream", str(world.downstream), "--source",
                                         f"jsonl:{world.jsonl}", "--since", "2026-05-04T06:00:00Z", "--until",
                                         "2026-05-04T07:00:00Z", "--name", "ascend", "--language", "en",
                                         "--state", str(tmp_path / "s.sqlite")])
    assert result.exit_code == 0, result.output
    assert "No upstream change this week affects ascend." in " ".join(result.output.split())


def test_digest_impact_exits_2_on_a_missing_downstream(world, tmp_path):
    result = CliRunner().invoke(_cli(), ["impact", "--downstream", str(tmp_path / "nowhere"), "--source",
                                         f"jsonl:{world.jsonl}", "--state", str(tmp_path / "s.sqlite")])
    assert result.exit_code == 2
    assert "nowhere" in result.output and "not found" in result.output


def test_the_index_is_cached_by_commit_and_rebuilt_after_a_new_one(tmp_path):
    from tests.git_support import git

    repo = tmp_path / "ds-repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, {"ds/__init__.py": "", "ds/a.py": "from vllm.x import Y\n"})
    commit(repo, "one")
    spec = DownstreamSpec("ascend", git=str(repo), ref="main", packages=("ds",))
    with open_store(tmp_path / "state.sqlite") as store:
        cold = load_index(spec, ("vllm",), store=store, state_dir=tmp_path)
        warm = load_index(spec, ("vllm",), store=store, state_dir=tmp_path)
        assert (cold.cached, warm.cached, warm.commit) == (False, True, cold.commit)
        assert [u.symbol for u in warm.uses] == ["vllm.x.Y"]
        assert (tmp_path / "downstreams" / "ascend.git").is_dir()  # the clone kept beside the state file
        write(repo, {"ds/b.py": "import vllm.z as z\nz.f()\n"})
        commit(repo, "two")
        later = load_index(spec, ("vllm",), store=store, state_dir=tmp_path)
        assert not later.cached and later.commit != cold.commit
        assert {u.symbol for u in later.uses} == {"vllm.x.Y", "vllm.z", "vllm.z.f"}


def test_an_unknown_downstream_is_one_error_naming_the_line(tmp_path):
    path = tmp_path / "readers.yaml"
    path.write_text("readers:\n  - id: a\n    name: A\n    email: a@example.com\n    downstream: acsend\n"
                    "downstreams:\n  ascend:\n    path: /srv/ascend\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_readers(path)
    assert str(err.value) == (f"{path}:5: readers[0] ('a') downstream: unknown downstream 'acsend'; known: ascend")


@pytest.fixture(scope="module")
def run_out(world, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("run")
    readers = readers_yaml(world, root / "readers.yaml")
    out = root / "out"
    result = CliRunner().invoke(_cli(), ["run", "--source", f"jsonl:{world.jsonl}", "--readers", str(readers),
                                         "--git", str(world.upstream), "--out", str(out), "--language", "en",
                                         "--state", str(root / "state.sqlite")])
    assert result.exit_code == 0, result.output
    return out


def _variant_keys(out: Path) -> tuple[str, str]:
    digest = json.loads((out / "digest.json").read_text(encoding="utf-8"))
    keys = {tuple(v["readers"]): v["key"] for v in digest["variants"]}
    return keys[("plugin-team",)], keys[("docs-reader",)]


def test_the_record_keeps_each_entrys_impact(run_out):
    digest = json.loads((run_out / "digest.json").read_text(encoding="utf-8"))
    impact = {e["number"]: e["impact"] for e in digest["entries"]}
    assert {i["how"] for i in impact[102]} == {"imports", "overrides"}
    assert impact[107] == [] and all(i["downstream"] == "ascend" for i in impact[102])
    plugin, docs = _variant_keys(run_out)
    assert plugin.endswith("_on-ascend")
    variants = {v["key"]: v["numbers"] for v in digest["variants"]}
    # The plugin team follows only docs, yet gets every PR that touches its code.
    assert {101, 102, 103, 104, 105, 106, 107} <= set(variants[plugin]) and 102 not in variants[docs]


def test_the_plugin_team_reads_the_block_first_in_every_medium(run_out):
    plugin, docs = _variant_keys(run_out)
    text = " ".join((run_out / "email" / f"{plugin}.txt").read_text(encoding="utf-8").split())
    html = (run_out / "email" / f"{plugin}.html").read_text(encoding="utf-8")
    slack = json.loads((run_out / "slack" / f"{plugin}.json").read_text(encoding="utf-8"))
    feishu = json.loads((run_out / "feishu" / f"{plugin}.json").read_text(encoding="utf-8"))
    parent = json.dumps(slack[0], ensure_ascii=False)
    intro = json.dumps(feishu[0]["card"]["elements"], ensure_ascii=False)
    line = "imports `FusedMoE`, renamed to `FusedMoEFactory` in #102"
    assert line in text and "`ds/ops/fused_moe.py:2`" in text
    assert "<code>ds/ops/fused_moe.py:2</code> imports <code>FusedMoE</code>, renamed to " \
           "<code>FusedMoEFactory</code> in #102" in html
    assert "`ds/ops/fused_moe.py:2` imports `FusedMoE`" in parent and "Affects your code" in parent
    assert "`ds/ops/fused_moe.py:2` imports `FusedMoE`" in intro and "Affects your code" in intro
    for shown in (text, html, parent, intro):
        first = shown.index("Affects your code")
        assert first < shown.index("Action required")
        assert "Read first" not in shown or shown.index("Action required") < shown.index("Read first")
    for medium, name in (("email", f"{docs}.txt"), ("email", f"{docs}.html")):
        assert "Affects your code" not in (run_out / medium / name).read_text(encoding="utf-8")
    # The docs reader reads by e-mail only: its variant is rendered on no other medium.
    assert not (run_out / "slack" / f"{docs}.json").exists() and not (run_out / "feishu" / f"{docs}.json").exists()


def test_the_archive_never_shows_the_downstreams_paths(run_out):
    site = run_out / "site"
    pages = [p.read_text(encoding="utf-8") for p in site.rglob("*") if p.is_file() and p.suffix in (".html", ".xml",
                                                                                                      ".json", ".js")]
    assert pages and not any("fused_moe.py" in page or "Affects your code" in page for page in pages)


def test_the_editor_sees_the_impact_in_the_review(world, run_out):
    from prdigest.kernel.models import Edition
    from prdigest.review.markdown import review_markdown

    digest = json.loads((run_out / "digest.json").read_text(encoding="utf-8"))
    edition = Edition.model_validate({k: v for k, v in digest.items() if k in Edition.model_fields})
    text = review_markdown(edition)
    assert "### Affects downstream ascend (4 break, 2 to check)" in text
    assert "`ds/ops/fused_moe.py:2` imports `vllm.model_executor.layers.fused_moe.FusedMoE`" in text
    assert text.index("Affects downstream") < text.index("### Action required")


def test_the_archive_shows_the_block_only_when_asked(run_out, tmp_path):
    state = run_out.parent / "state.sqlite"
    for flags, shown in (([], False), (["--impact"], True)):
        out = tmp_path / ("on" if shown else "off")
        result = CliRunner().invoke(_cli(), ["site", "--state", str(state), "--out", str(out), *flags])
        assert result.exit_code == 0, result.output
        page = next((out / "site" / "editions").rglob("index.html")).read_text(encoding="utf-8")
        assert ("Affects your code · ascend" in page) is shown
        assert ("<code>ds/ops/fused_moe.py:2</code> imports <code>FusedMoE</code>" in page) is shown
