"""A run on a repository without a rules file uses the subsystems `digest rules init` would propose, says so
in one line, shows the editor which were proposed, and keeps them in the state store so that the next
edition uses the same names until a rules file is committed."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from flows.media import default_media
from prdigest.classify.proposal.kept import ProposedClassifier, load_kept
from prdigest.classify.subsystems import RulesClassifier
from prdigest.kernel.config import Settings
from prdigest.kernel.errors import ConfigError
from prdigest.pipeline.compose import RunOptions, build_services, make_classifier
from prdigest.pipeline.edition import EditionPipeline
from prdigest.review import md, review_markdown
from prdigest.state.store import open_store
from tests.proposal_support import KETTLE, KETTLE_REPO, checkout_kettle, kettle_tree
from tests.servers.github_server import GitHubServer, load_jsonl, make_state


def _week(tmp_path: Path, name: str, records: list[dict]) -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _later(stamp: str, *, days: int) -> str:
    shifted = datetime.fromisoformat(stamp.replace("Z", "+00:00")) + timedelta(days=days)
    return shifted.strftime("%Y-%m-%dT%H:%M:%SZ")


def _run(options: RunOptions, settings: Settings):
    services = build_services(options, settings, default_media())
    try:
        return services, EditionPipeline(services).run()
    finally:
        services.close()


def test_a_jsonl_week_without_rules_uses_the_proposal_and_says_so(tmp_path: Path, state_location: str) -> None:
    records = load_jsonl(KETTLE / "prs.jsonl")
    settings = Settings(state=state_location)
    options = RunOptions(source=f"jsonl:{_week(tmp_path, 'w1.jsonl', records[:60])}", out=str(tmp_path / "out"),
                         state=state_location)
    services, summary = _run(options, settings)
    assert isinstance(services.classifier, ProposedClassifier)
    assert len(summary.notices) == 1
    assert summary.notices[0].startswith("No rules file for acme-labs/kettle: using the ")
    assert "digest rules init --repo acme-labs/kettle" in summary.notices[0]
    proposed = set(services.classifier.known_subsystems)
    # The labels the PRs show are subsystems by their slug (a JSONL file has no labeler to read).
    assert {"area-sql", "module-ops", "area-connectors"} <= proposed
    assert set(summary.per_subsystem) <= proposed
    edition = json.loads((tmp_path / "out" / "digest.json").read_text(encoding="utf-8"))
    assert {s for e in edition["entries"] for s in e["subsystems"]} <= proposed


def test_the_next_edition_keeps_the_same_names_until_a_rules_file_is_given(tmp_path: Path,
                                                                         state_location: str) -> None:
    records = load_jsonl(KETTLE / "prs.jsonl")
    settings = Settings(state=state_location)
    first = RunOptions(source=f"jsonl:{_week(tmp_path, 'w1.jsonl', records[:60])}", out=str(tmp_path / "o1"))
    services, _ = _run(first, settings)
    names = services.classifier.vocabulary.names
    # The next week's edition: a week whose PRs alone would propose something else (no labels at all).
    second_week = [{**r, "labels": [], "merged_at": _later(r["merged_at"], days=7)} for r in records[60:]]
    second = RunOptions(source=f"jsonl:{_week(tmp_path, 'w2.jsonl', second_week)}", out=str(tmp_path / "o2"))
    again, summary = _run(second, settings)
    assert again.classifier.vocabulary.names == names
    assert summary.notices == [services.notices[0]]
    with open_store(state_location) as store:
        assert store.fetchone("SELECT COUNT(*) FROM proposed_rules")[0] == 1
    # Once a rules file is committed (here: given), the kept proposal is not used.
    (tmp_path / "rules.yaml").write_text("subsystems:\n  engine: {paths: ['^kettle/engine/']}\n", encoding="utf-8")
    (tmp_path / "readers.yaml").write_text("readers:\n  - {id: all, name: All, email: a@example.com}\n",
                                           encoding="utf-8")
    ruled = second.model_copy(update={"rules": str(tmp_path / "rules.yaml"), "readers": str(tmp_path / "readers.yaml"),
                                      "out": str(tmp_path / "o3")})
    services = build_services(ruled, settings, default_media())
    try:
        assert type(services.classifier) is RulesClassifier and services.notices == []
    finally:
        services.close()


def test_a_github_source_proposes_from_the_repository_itself(tmp_path: Path) -> None:
    checkout = checkout_kettle(tmp_path / "kettle")
    files = {p: (checkout / p).read_bytes() for p in kettle_tree()}
    files[".github/labeler.yml"] = (KETTLE / "labeler.yml").read_bytes()
    records = load_jsonl(KETTLE / "prs.jsonl")
    with GitHubServer(make_state(records, KETTLE_REPO, token="t0ken", files=files)) as server:
        settings = Settings(state=tmp_path / "s.sqlite", github_url=server.url, github_token="t0ken")
        options = RunOptions(source="github", repo=KETTLE_REPO, since="2026-11-16", until="2026-11-23",
                             out=str(tmp_path / "out"))
        services, summary = _run(options, settings)
        kinds = dict(server.state.kinds)
    assert kinds.get("tree") == 1 and kinds.get("contents") == 2  # the labeler and CODEOWNERS, read once
    kept = services.classifier.kept  # type: ignore[attr-defined]
    assert "the GitHub API (acme-labs/kettle@main)" in summary.notices[0]
    shown = {n: s for n, s, _ in kept.shown}
    assert shown["module-ops"] == "module:ops" and "runtime" in shown  # labeler labels and a folder of code
    # A later step of the same run (the review, a resend) finds the kept proposal without reading GitHub.
    again = make_classifier(options, KETTLE_REPO, settings)
    assert isinstance(again, ProposedClassifier) and again.kept.shown == kept.shown


def test_readers_subscribe_to_proposed_names(tmp_path: Path) -> None:
    week = _week(tmp_path, "w.jsonl", load_jsonl(KETTLE / "prs.jsonl"))
    settings = Settings(state=tmp_path / "s.sqlite")
    good = tmp_path / "readers.yaml"
    good.write_text("readers:\n  - {id: sql, name: SQL team, email: sql@example.com, subsystems: [area-sql]}\n",
                    encoding="utf-8")
    options = RunOptions(source=f"jsonl:{week}", readers=str(good), out=str(tmp_path / "out"))
    build_services(options, settings, default_media()).close()
    bad = tmp_path / "bad.yaml"
    bad.write_text("readers:\n  - {id: x, name: X, email: x@example.com, subsystems: [attention]}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"unknown subsystem\(s\) attention; known: .*area-sql"):
        build_services(options.model_copy(update={"readers": str(bad)}), settings, default_media())


def test_the_editor_is_shown_which_subsystems_were_proposed(tmp_path: Path) -> None:
    records = load_jsonl(KETTLE / "prs.jsonl")[:20]
    for r in records[:3]:
        r["labels"] = ["<img src=x onerror=alert(1)>"]
    settings = Settings(state=tmp_path / "s.sqlite")
    options = RunOptions(source=f"jsonl:{_week(tmp_path, 'w.jsonl', records)}", out=str(tmp_path / "out"))
    services = build_services(options, settings, default_media())
    try:
        pipeline = EditionPipeline(services)
        collected = pipeline.collect()
        edition = pipeline.new_edition(collected, pipeline.draft(collected.prs))
    finally:
        services.close()
    kept = services.classifier.kept  # type: ignore[attr-defined]
    text = review_markdown(edition, notes=kept.markdown(md))
    assert f"### Proposed subsystems ({len(kept.shown)})" in text
    assert "No rules file for acme-labs/kettle" in text
    assert "`img-src-x-onerror-alert-1` (\\<img src=x onerror=alert(1)\\>)" in text  # inert markdown
    with open_store(tmp_path / "s.sqlite") as store:
        assert load_kept(store, "ACME-LABS/Kettle") is not None  # GitHub names are case-insensitive


def test_the_proposal_is_kept_in_the_runs_own_state_store(tmp_path: Path) -> None:
    week = _week(tmp_path, "w.jsonl", load_jsonl(KETTLE / "prs.jsonl")[:30])
    services = build_services(RunOptions(source=f"jsonl:{week}", out=str(tmp_path / "out")),
                              Settings(state=tmp_path / "s.sqlite"), default_media())
    try:
        assert services.state.opened  # opened once, to keep the proposal, and shared with the rest of the run
        assert load_kept(services.store(), KETTLE_REPO) is not None
    finally:
        services.close()
