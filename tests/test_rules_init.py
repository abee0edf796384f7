"""`digest rules init`: a repository the project has never seen gets a useful vocabulary in one command."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from flows.cli import app
from prdigest.classify.proposal.check import check_rules, label_agreement
from prdigest.classify.proposal.init import init_rules, write_proposal
from prdigest.classify.proposal.propose import propose
from prdigest.classify.proposal.repo import RepoSnapshot, from_checkout, from_prs
from prdigest.classify.proposal.tree import TreeFile
from prdigest.classify.proposal.writer import render
from prdigest.classify.rulesfile import load_rules
from prdigest.collect.sources import read_jsonl
from prdigest.kernel.config import load_settings
from tests.proposal_support import KETTLE, KETTLE_REPO, checkout_kettle, kettle_tree
from tests.servers.github_server import GitHubServer, load_jsonl, make_state


@pytest.fixture(scope="module")
def kettle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return checkout_kettle(tmp_path_factory.mktemp("kettle"))


@pytest.fixture(scope="module")
def week():
    return read_jsonl(KETTLE / "prs.jsonl")


def test_unseen_repo_meets_the_targets_on_its_week(kettle: Path, week, tmp_path: Path) -> None:
    out = tmp_path / "rules.yaml"
    proposal = init_rules(KETTLE_REPO, out, checkout=kettle)
    rules = load_rules(out)
    assert rules == proposal.rules()  # the written file loads and validates like a hand-written one
    report = check_rules(rules, week)
    agreement = label_agreement(rules, week, report.classified)
    assert agreement.single_label >= 50
    assert agreement.share >= 0.85, agreement.missed
    assert report.largest[1] <= 0.40, report.per_subsystem
    assert report.catch_all_share <= 0.10, report.catch_all


def test_labels_are_named_by_slug_and_shown_as_written(kettle: Path) -> None:
    proposal = propose(from_checkout(kettle, KETTLE_REPO))
    shown = {p.name: p.shown for p in proposal.subsystems}
    assert shown["module-ops"] == "module:ops"
    assert shown["area-connectors"] == "area:connectors"
    assert shown["documentation"] == "documentation"
    # Folders of code no label covers: the CODEOWNERS section names one, the tree proposes the other.
    assert shown["query-engine"] == "Query engine"
    assert shown["runtime"] == "kettle/runtime/"
    assert "kettle-core" in shown  # what kettle/ holds outside its proposed folders
    assert any("'Connectors' owns the same files as label 'area:connectors'" in n for n in proposal.notes)
    rules = proposal.rules()
    assert rules.digest_shows == "labels"
    assert rules.vocabulary().label("module-ops", "en") == "module:ops"


def test_the_written_file_says_where_each_subsystem_came_from(kettle: Path, tmp_path: Path) -> None:
    out = tmp_path / "rules.yaml"
    init_rules(KETTLE_REPO, out, checkout=kettle)
    text = out.read_text(encoding="utf-8")
    assert "# module:ops: a label actions/labeler applies." in text
    assert "#   as written: any-glob-to-any-file: kettle/ops/*.py" in text
    assert "# kettle/runtime/: a folder of code no label covers." in text
    assert "# Query engine: a CODEOWNERS section." in text
    assert "head-branch ['^release/'] is not mapped" in text
    assert "digest rules check" in text


def test_one_level_glob_leaves_the_subfolder_to_another_subsystem(kettle: Path) -> None:
    classify = _classifier(propose(from_checkout(kettle, KETTLE_REPO)))
    assert classify("kettle/ops/join.py") == ["module-ops"]
    assert classify("kettle/ops/native/simd.py") == ["native-kernels"]
    assert classify("kettle/ui/README.md") != ["area-ui"]  # negated in the labeler
    assert classify("kettle/ui/src/app.ts") == ["area-ui"]


def _classifier(proposal):
    from prdigest.classify.subsystems import RulesClassifier
    from prdigest.kernel.models import PullRequest

    classifier = RulesClassifier(proposal.rules())

    def classify(path: str) -> list[str]:
        pr = PullRequest.model_validate({
            "number": 1, "url": "https://github.com/o/r/pull/1", "title": "t", "author": "a",
            "created_at": "2026-11-16T00:00:00Z", "merged_at": "2026-11-16T00:00:00Z", "labels": [], "body": "",
            "files": [{"path": path, "additions": 10, "deletions": 0, "status": "modified"}]})
        return classifier.classify(pr)
    return classify


def test_synthetic_tree_splits_the_package_into_its_folders() -> None:
    files = [TreeFile(f"pkg/attention/{n}.py", 400) for n in "abcdefgh"]
    files += [TreeFile(f"pkg/worker/{n}.py", 350) for n in "abcdef"]
    files += [TreeFile(f"pkg/spec_decode/{n}.py", 300) for n in "abcd"]
    files += [TreeFile(f"pkg/{n}.py", 200) for n in ("config", "utils", "envs", "logger")]
    files += [TreeFile(f"pkg/tiny/{n}.py", 20) for n in "ab"]
    files += [TreeFile(f"tests/{n}/test_x.py", 100) for n in ("attention", "worker")]
    files += [TreeFile("docs/index.md", 50), TreeFile(".github/workflows/ci.yml", 40)]
    proposal = propose(RepoSnapshot("o/r", "a synthetic tree", files=files))
    names = proposal.names
    assert {"attention", "worker", "spec-decode", "pkg-core", "docs", "ci-build", "tests"} <= set(names)
    assert "pkg" not in names  # the package as a whole is no vocabulary
    classify = _classifier(proposal)
    assert classify("pkg/worker/b.py") == ["worker"]
    assert classify("pkg/tiny/a.py") == ["pkg-core"]
    assert classify("pkg/config.py") == ["pkg-core"]
    assert classify("tests/worker/test_x.py") == ["tests"]


def test_repo_with_none_of_the_files_still_gets_a_valid_proposal(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    for name in ("core", "io", "cli"):
        (tmp_path / "src" / f"{name}.go").write_text("package x\n" * 50, encoding="utf-8")
    out = tmp_path / "rules.yaml"
    proposal = init_rules("o/plain", out, checkout=tmp_path)
    assert any(n.startswith("not found: labeler, mergify, codeowners") for n in proposal.notes)
    assert load_rules(out) == proposal.rules()
    empty = tmp_path / "empty"
    empty.mkdir()
    bare = init_rules("o/empty", tmp_path / "bare.yaml", checkout=empty)
    assert bare.names and load_rules(tmp_path / "bare.yaml").fallback == "other"


def test_labels_that_slug_alike_are_made_distinct_and_said_so(tmp_path: Path) -> None:
    checkout = tmp_path / "repo"
    (checkout / ".github").mkdir(parents=True)
    (checkout / ".github" / "labeler.yml").write_text(
        "'module:ops': ['ops/**']\n'module-ops': ['ops2/**']\n'Module Ops!': ['ops3/**']\n'🚀': ['rocket/**']\n"
        "other: ['misc/**']\n", encoding="utf-8")
    out = tmp_path / "rules.yaml"
    proposal = init_rules("o/r", out, checkout=checkout)
    shown = {p.shown: p.name for p in proposal.subsystems}
    assert shown["module:ops"] == "module-ops"
    assert {shown["module-ops"], shown["Module Ops!"]} == {"module-ops-2", "module-ops-3"}
    assert shown["🚀"] == "area"
    assert sum("both make the name 'module-ops'" in n for n in proposal.notes) == 2
    # A label called "other" takes that name: the catch-all moves aside.
    assert proposal.fallback == "misc"
    assert load_rules(out) == proposal.rules()


def test_hostile_names_and_patterns_cannot_change_the_written_file(tmp_path: Path) -> None:
    checkout = tmp_path / "repo"
    (checkout / ".github").mkdir(parents=True)
    labeler = {"evil\nfallback: pwned\n#": ["a/**"], "x]\"': {}": ["*a*a*a*a*a*b", "b/**"],
               "\x1b[31mred\u202e": ["c/**"]}
    (checkout / ".github" / "labeler.yml").write_text(yaml.safe_dump(labeler), encoding="utf-8")
    (checkout / ".github" / "CODEOWNERS").write_text("# Area\n/d/ @x\n# Long\n" + "/e" * 400 + " @y\n",
                                                      encoding="utf-8")
    out = tmp_path / "rules.yaml"
    proposal = init_rules("o/r", out, checkout=checkout)
    rules = load_rules(out)
    assert rules.fallback == "other" and rules == proposal.rules()
    text = out.read_text(encoding="utf-8")
    assert "\x1b" not in text and "\u202e" not in text
    assert not re.search(r"^fallback: pwned", text, re.MULTILINE)
    assert "'*a*a*a*a*a*b' skipped" in text
    assert "pattern" in text and "skipped" in text  # the over-long CODEOWNERS pattern


def test_a_mergify_pattern_that_backtracks_is_not_copied_into_the_proposal(tmp_path: Path) -> None:
    """An upstream's mergify file with the pattern an audit found (issue 30): the proposal skips it, says why
    in the file, and the written rules load (the run they serve never meets it)."""
    checkout = tmp_path / "repo"
    (checkout / ".github").mkdir(parents=True)
    mergify = {"pull_request_rules": [{"name": "label kernels", "conditions": [
        {"or": [r"title~=(?i)^(?!revert)(\w\w|\w)*\[kernel\]", "files~=^csrc/"]}],
        "actions": {"label": {"add": ["kernel"]}}}]}
    (checkout / ".github" / "mergify.yml").write_text(yaml.safe_dump(mergify), encoding="utf-8")
    out = tmp_path / "rules.yaml"
    proposal = init_rules("o/r", out, checkout=checkout)
    rules = load_rules(out)
    kernel = rules.subsystems["kernel"]
    assert list(kernel.paths) == ["^csrc/"] and not kernel.titles
    text = out.read_text(encoding="utf-8")
    assert "skipped: repeats a part that can match the same text in two ways" in text
    assert proposal.rules() == rules


def test_labels_of_recent_prs_become_subsystems_unless_they_are_process_labels() -> None:
    prs = read_jsonl(KETTLE / "prs.jsonl")
    relabelled = []
    for i, pr in enumerate(prs):
        extra = ["ready"] + (["perf"] if i % 10 == 0 else []) + (["kind/bug"] if i % 3 == 0 else [])
        relabelled.append(pr.model_copy(update={"labels": [*pr.labels, *extra]}))
    proposal = propose(from_prs(KETTLE_REPO, relabelled))
    by = {p.shown: p for p in proposal.subsystems}
    assert by["perf"].area.origin == "pr-labels" and by["perf"].area.labels == ["perf"]
    assert "ready" not in by and "kind/bug" not in by
    # Without the labeler's rules, its labels are what the PRs show: recognised by the label.
    assert by["area:sql"].area.labels == ["area:sql"]


def test_cli_init_writes_once_and_check_reports_the_week(kettle: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "kettle.yaml"
    done = runner.invoke(app, ["rules", "init", "--repo", KETTLE_REPO, "--checkout", str(kettle), "--out", str(out)])
    assert done.exit_code == 0, done.output
    assert "module-ops" in done.output and out.exists()
    again = runner.invoke(app, ["rules", "init", "--repo", KETTLE_REPO, "--checkout", str(kettle), "--out", str(out)])
    assert again.exit_code == 2 and "exists: pass --force" in again.output
    checked = runner.invoke(app, ["rules", "check", str(out), "--source", f"jsonl:{KETTLE / 'prs.jsonl'}", "--json"])
    assert checked.exit_code == 0, checked.output
    report = json.loads(checked.output)
    assert report["prs"] == 104 and report["largest_share"] <= 0.4 and report["problems"] == []
    table = runner.invoke(app, ["rules", "check", str(out), "--source", f"jsonl:{KETTLE / 'prs.jsonl'}",
                                "--since", "2026-11-16", "--until", "2026-11-18"])
    assert table.exit_code == 0 and "largest subsystem:" in table.output
    bad = runner.invoke(app, ["rules", "init", "--repo", "not a repo", "--checkout", str(kettle), "--out",
                              str(tmp_path / "x.yaml")])
    assert bad.exit_code == 2 and "--repo 'not a repo'" in bad.output


def test_check_names_a_vocabulary_that_is_too_coarse(tmp_path: Path, week) -> None:
    coarse = tmp_path / "coarse.yaml"
    coarse.write_text("subsystems:\n  code: {paths: ['^kettle/']}\n", encoding="utf-8")
    report = check_rules(load_rules(coarse), week)
    problems = report.problems()
    assert report.largest[0] == "code" and report.largest[1] > 0.4
    assert any("'code' holds" in p for p in problems) and any("catch-all 'other'" in p for p in problems)


def test_through_the_github_api_the_same_vocabulary_comes_from_contents_and_trees(kettle: Path,
                                                                                 tmp_path: Path) -> None:
    files = {path: (kettle / path).read_bytes() for path in kettle_tree()}
    files[".github/labeler.yml"] = (KETTLE / "labeler.yml").read_bytes()
    files[".github/CODEOWNERS"] = (KETTLE / "CODEOWNERS").read_bytes()
    records = load_jsonl(KETTLE / "prs.jsonl")
    for record in records[:30]:
        record["labels"] = [*record["labels"], "perf"] if record["number"] % 4 == 0 else record["labels"]
    with GitHubServer(make_state(records, KETTLE_REPO, token="t0ken", files=files)) as server:
        settings = load_settings(github_url=server.url, github_token="t0ken")
        remote = init_rules(KETTLE_REPO, tmp_path / "remote.yaml", settings=settings)
        kinds = server.state.kinds
    local = propose(from_checkout(kettle, KETTLE_REPO))
    label_names = {p.name for p in local.subsystems if p.area.origin in ("labeler", "codeowners")}
    assert label_names <= set(remote.names)
    assert "perf" in remote.names  # a label on recent PRs that no rule applies
    assert kinds["tree"] == 1 and kinds["contents"] == 2 and kinds["pull_list"] >= 1
    assert load_rules(tmp_path / "remote.yaml") == remote.rules()


def test_from_a_checkout_nothing_is_fetched(kettle: Path, tmp_path: Path) -> None:
    with GitHubServer(make_state([], KETTLE_REPO)) as server:
        settings = load_settings(github_url=server.url, github_token="t0ken")
        proposal = init_rules(KETTLE_REPO, tmp_path / "r.yaml", checkout=kettle, settings=settings)
        assert server.state.requests == 0
    assert proposal.names


def test_write_refuses_nothing_it_cannot_load(tmp_path: Path) -> None:
    proposal = propose(RepoSnapshot("o/r", "nothing"))
    text = write_proposal(proposal, tmp_path / "deep" / "rules.yaml")
    assert text == (tmp_path / "deep" / "rules.yaml").read_text(encoding="utf-8")
    assert not list((tmp_path / "deep").glob(".rules-*"))


def test_the_proposal_says_where_code_facts_find_envs_arguments_and_configs(tmp_path: Path) -> None:
    files = [TreeFile(p, 100) for p in ("pkg/__init__.py", "pkg/envs.py", "pkg/engine/arg_utils.py",
                                        "pkg/config/__init__.py", "pkg/config/model.py", "pkg/layers.py",
                                        "tests/envs.py", "docs/conf.py", "README.md")]
    proposal = propose(RepoSnapshot("o/r", "a synthetic tree", files=files))
    code = proposal.rules().code
    assert code.packages == ("pkg",) and code.env_files == (r"^pkg/envs\.py$",)
    assert code.argument_files == (r"^pkg/engine/arg_utils\.py$",) and code.config_files == ("^pkg/config/",)
    written = tmp_path / "rules.yaml"
    written.write_text(render(proposal))
    assert load_rules(written).code == code  # the written file loads into the same section
    bare = propose(RepoSnapshot("o/r", "a synthetic tree", files=[TreeFile("lib/a.py", 10)]))
    assert bare.code is None and "code:" not in render(bare)


def test_check_names_a_subsystem_shown_as_a_folder_it_does_not_hold(tmp_path: Path, week) -> None:
    """What `rules init` made of vllm-ascend's commented-out `# /vllm_ascend/eplb`, and `rules check` called
    healthy: a subsystem shown as that folder, holding lora and kv_offload."""
    written = tmp_path / "ascend.yaml"
    written.write_text(
        "subsystems:\n"
        "  vllm-ascend-eplb:\n"
        "    display: {en: /vllm_ascend/eplb}\n"
        "    paths: ['^vllm_ascend/distributed/kv_transfer/kv_pool/kv_offload(?:/|$)', '^vllm_ascend/lora(?:/|$)']\n"
        "  vllm-ascend-ops:\n"
        "    display: {en: /vllm_ascend/ops}\n"
        "    paths: ['^vllm_ascend/ops(?:/|$)']\n"
        "  infra-ci:\n"
        "    display: {en: 'Infra, CI'}\n"
        "    paths: ['^\\.github/']\n", encoding="utf-8")
    problems = check_rules(load_rules(written), week).problems()
    named = [p for p in problems if "is shown as the folder" in p]
    assert named == ["'vllm-ascend-eplb' is shown as the folder /vllm_ascend/eplb but none of its paths is in that "
                     "folder: it holds another area's files (a commented-out CODEOWNERS rule taken for a section?); "
                     "rename it or move its paths"]
