"""A whole run with code facts: the same week from a JSONL file with and without ``--git`` (a real repository
built in the test), the facts in digest.json, marked git or patches; the clone kept in the state folder; a
warm re-run computes none; an unreachable clone is one line and the edition still goes out."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from flows.media import default_media
from prdigest.collect.facts import FactsCache
from prdigest.kernel.config import load_settings
from prdigest.pipeline.compose import RunOptions, build_services
from prdigest.pipeline.edition import EditionPipeline
from prdigest.state.store import open_store
from tests.git_support import EXPECTED, Upstream, build_upstream

RULES = r"""
subsystems:
  core:
    paths: ['^pkg/']
  kernels:
    paths: ['^csrc/']
  docs:
    paths: ['^docs/']
code:
  packages: [pkg]
  env_files: ['^pkg/envs\.py$']
  argument_files: ['^pkg/args\.py$']
  argument_classes: [EngineArgs]
  config_files: ['^pkg/config\.py$']
"""


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Upstream:
    return build_upstream(tmp_path_factory.mktemp("run"))


def _run(upstream: Upstream, tmp: Path, *, git: str | None, state: Path | None = None,
         again: bool = False) -> dict[str, Any]:
    tmp.mkdir(parents=True, exist_ok=True)
    week = tmp / "week.jsonl"
    week.write_text("".join(pr.model_dump_json(exclude={"changes", "facts_source"}) + "\n" for pr in upstream.prs))
    rules = tmp / "rules.yaml"
    rules.write_text(RULES)
    readers = tmp / "readers.yaml"
    readers.write_text("readers:\n  - id: core-team\n    name: Core\n    email: core@example.com\n    subsystems: [core]\n")
    out = tmp / "out"
    options = RunOptions(source=f"jsonl:{week}", out=str(out), rules=str(rules), readers=str(readers), language="en", git=git,
                         state=str(state or tmp / "state.sqlite"), since="2026-11-16", until="2026-11-23",
                         resend_edition=again)
    settings = load_settings(**options.settings_overrides())
    services = build_services(options, settings, default_media())
    try:
        EditionPipeline(services).run()
    finally:
        services.close()
    return json.loads((out / "digest.json").read_text())


def test_the_week_with_git_has_every_fact_in_digest_json(upstream: Upstream, tmp_path: Path) -> None:
    digest = _run(upstream, tmp_path, git=upstream.url)
    entries = {e["number"]: e for e in digest["entries"]}
    for number, expected in EXPECTED.items():
        entry = entries[number]
        assert {(c["kind"], c["symbol"], c["detail"]) for c in entry["changes"]} == expected, number
        assert entry["coverage"]["source"] == "git"
    assert {n for n, e in entries.items() if e["breaking"]} == {101, 102, 103, 104, 105}
    # the URL's clone is kept beside the SQLite state, bare and blob-less
    (kept,) = (tmp_path / "git").iterdir()
    assert "partialclonefilter = blob:none" in (kept / "config").read_text()


def test_the_same_week_without_git_comes_from_the_patches_marked_so(upstream: Upstream, tmp_path: Path) -> None:
    digest = _run(upstream, tmp_path, git=None)
    entries = {e["number"]: e for e in digest["entries"]}
    assert {e["coverage"]["source"] for e in entries.values()} == {"patches"}
    assert ("renamed", "new_name") not in {(c["kind"], c["symbol"]) for c in entries[101]["changes"]}  # partial
    assert ("file-deleted", "pkg/legacy.py") in {(c["kind"], c["symbol"]) for c in entries[105]["changes"]}
    assert not (tmp_path / "git").exists()


def test_a_warm_rerun_computes_no_fact(upstream: Upstream, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    state = tmp_path / "state.sqlite"
    _run(upstream, tmp_path / "first", git=str(upstream.path), state=state)
    with open_store(state) as store:
        rows = len(FactsCache(store))
    assert rows == len(upstream.prs)
    with caplog.at_level(logging.INFO, logger="prdigest.collect.facts.step"):
        again = _run(upstream, tmp_path / "second", git=str(upstream.path), state=state, again=True)
    assert f"{len(upstream.prs)} PRs, 0 commits computed, {len(upstream.prs)} cached" in caplog.text
    with open_store(state) as store:
        assert len(FactsCache(store)) == rows
    assert {e["coverage"]["source"] for e in again["entries"]} == {"git"}


def test_an_unreachable_clone_is_one_line_and_the_edition_goes_out(upstream: Upstream, tmp_path: Path,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="prdigest.collect"):
        digest = _run(upstream, tmp_path, git="file:///nonexistent/acme/pkg.git")
    problems = [r.getMessage() for r in caplog.records if r.name.startswith("prdigest.collect")]
    assert len(problems) == 1 and "\n" not in problems[0]
    assert "--git" in problems[0] and "REST patches" in problems[0]
    assert len(digest["entries"]) == len(upstream.prs)
    assert {e["coverage"]["source"] for e in digest["entries"]} == {"patches"}


def _github_run(upstream: Upstream, tmp_path: Path, git: str, records: list[dict[str, Any]]
                ) -> tuple[dict[str, int], dict[str, Any]]:
    from tests.servers.github_server import GitHubServer, make_state

    tmp_path.mkdir(parents=True, exist_ok=True)
    server = GitHubServer(make_state(records, "acme/pkg", token="ghp_facts-test-token")).start()
    try:
        rules = tmp_path / "rules.yaml"
        rules.write_text(RULES)
        readers = tmp_path / "readers.yaml"
        readers.write_text("readers:\n  - id: core-team\n    name: Core\n    email: core@example.com\n")
        options = RunOptions(source="github", repo="acme/pkg", out=str(tmp_path / "out"), rules=str(rules),
                             readers=str(readers), language="en", git=git, github_url=server.url,
                             state=str(tmp_path / "state.sqlite"), since="2026-11-16", until="2026-11-23")
        settings = load_settings(**options.settings_overrides(), github_token="ghp_facts-test-token")
        services = build_services(options, settings, default_media())
        try:
            EditionPipeline(services).run()
        finally:
            services.close()
        kinds = server.state.stats()["kinds"]
    finally:
        server.stop()
    return kinds, json.loads((tmp_path / "out" / "digest.json").read_text())


def test_a_github_week_whose_clone_fails_lists_every_file_from_github(upstream: Upstream, tmp_path: Path,
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    records = [json.loads(pr.model_dump_json(exclude={"changes", "facts_source"})) for pr in upstream.prs]
    records[0]["merge_commit"] = "ab" * 20  # one PR whose commit the clone lacks: its files from GitHub too
    with caplog.at_level(logging.WARNING, logger="prdigest.collect"):
        kinds, digest = _github_run(upstream, tmp_path / "bad", "file:///nonexistent/acme/pkg.git", records)
    assert kinds.get("files", 0) == len(records)  # nothing lost: the REST files and patches, as without --git
    assert {e["coverage"]["source"] for e in digest["entries"]} == {"patches"}
    said = [r.getMessage() for r in caplog.records if r.name.startswith("prdigest.collect")]
    # The clone's failure, then the GitHub API's files tried instead (this server serves no commit): patches.
    assert len(said) == 2 and "git clone failed" in said[0] and said[1].startswith("the GitHub API: 6 merge commit")
    kinds, digest = _github_run(upstream, tmp_path / "good", str(upstream.path), records)
    assert kinds.get("files", 0) == 1  # only the PR whose merge commit is not in the clone
    sources = {e["number"]: e["coverage"]["source"] for e in digest["entries"]}
    assert sources[101] == "patches" and {s for n, s in sources.items() if n != 101} == {"git"}


def test_with_a_clone_a_github_week_makes_no_request_for_its_diffs(upstream: Upstream, tmp_path: Path) -> None:
    records = [json.loads(pr.model_dump_json(exclude={"changes", "facts_source"})) for pr in upstream.prs]
    kinds, digest = _github_run(upstream, tmp_path, str(upstream.path), records)
    assert kinds.get("files", 0) == 0 and kinds.get("pull", 0) == 0  # no PR's files, no PR fetched for its sha
    assert kinds.get("pull_list", 0) == 1  # the merge commits of the week: one page of the closed-PR list
    entries = {e["number"]: e for e in digest["entries"]}
    for number, expected in EXPECTED.items():
        assert {(c["kind"], c["symbol"], c["detail"]) for c in entries[number]["changes"]} == expected, number
        assert entries[number]["coverage"]["source"] == "git"
    assert entries[103]["files_changed"] == 4 and entries[101]["additions"] == 8  # the files from git
