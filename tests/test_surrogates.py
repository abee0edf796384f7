"""A lone surrogate in PR text (a JSONL line's ``\\ud800`` escape, GitHub's JSON) stops nothing: it becomes U+FFFD
where the record is read, every hash and cache key takes any text, and every file a run writes (digest.json,
messages, the outbox, the archive) is valid UTF-8 — through drafting (offline and OpenAI), review (auto and edits),
render, outbox delivery and the site."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from flows.cli import app
from prdigest.draft.cache import draft_key
from prdigest.kernel.models import EditionId, PullRequest
from prdigest.review import EntryEdit, ReviewDecision, apply_decision, record_review
from prdigest.review.edits import pr_hash
from prdigest.state import record as records
from prdigest.state.store import open_store

REPO = "vllm-project/vllm"
WEEK = EditionId(REPO, datetime(2026, 11, 16, tzinfo=timezone.utc), datetime(2026, 11, 23, tzinfo=timezone.utc))
#: A high and a low surrogate alone, and one of each the wrong way round: none is valid UTF-8.
LONE = "\ud800x\udfff\udc00\udbff"


def _t(text: str) -> str:
    return f"{text} {LONE}"


def _record(number: int, merged: str) -> dict[str, Any]:
    """A PR whose every text field holds lone surrogates."""
    patch = (f"@@ -1,3 +1,4 @@\n def f(x):\n-    return x  # {LONE}\n+    s = '{LONE}'\n+    return x, s\n")
    return {
        "number": number, "url": f"https://github.com/{REPO}/pull/{number}",
        "title": _t(f"[Core] change {number}"), "author": _t("amy"), "created_at": "2026-11-16T09:00:00Z",
        "merged_at": merged, "labels": [_t("ready"), LONE], "body": _t("Fixes #31913.\n\nA body"),
        "files": [{"path": f"vllm/v1/core/blk{LONE}.py", "additions": 2, "deletions": 1, "status": "modified",
                   "patch": patch},
                  {"path": "vllm/v1/core/sched.py", "previous_path": f"vllm/old{LONE}.py", "additions": 1,
                   "deletions": 1, "status": "renamed", "patch": patch}],
        "additions": 3, "deletions": 2,
        "review_comments": [{"author": _t("njhill"), "body": _t("inline"), "path": f"vllm/v1/core/blk{LONE}.py"}],
        "reviews": [{"author": _t("woosuk"), "state": "APPROVED", "body": _t("LGTM")}],
        "comments": [{"author": _t("bob"), "body": _t("conversation")}],
        "linked_issues": [{"number": 31913, "title": _t("issue"), "body": _t("issue body"), "state": "open"}],
    }


def _week() -> list[dict[str, Any]]:
    return [_record(101, "2026-11-17T10:00:00Z"), _record(102, "2026-11-18T10:00:00Z")]


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    # json.dumps escapes the surrogates (\ud800): the file itself is valid UTF-8, as a real export would be.
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _all_utf8(folder: Path) -> int:
    """The number of files under ``folder``, each checked to be valid UTF-8 with no U+D800-DFFF escape."""
    files = [p for p in folder.rglob("*") if p.is_file() and p.suffix not in (".png", ".sqlite", ".gz")]
    for path in files:
        text = path.read_bytes().decode("utf-8")  # strict: raises on a surrogate written by "surrogatepass"
        assert "\\ud800" not in text.lower() and "\\udfff" not in text.lower(), path
    return len(files)


def _readers(tmp_path: Path) -> Path:
    path = tmp_path / "readers.yaml"
    path.write_text("readers:\n  - id: core\n    name: Core\n    email: core@example.com\n    slack: '#core'\n",
                    encoding="utf-8")
    return path


def test_every_text_field_of_a_pr_is_read_with_replacement_characters() -> None:
    pr = PullRequest.model_validate(_record(101, "2026-11-17T10:00:00Z"))
    dumped = pr.model_dump_json()
    dumped.encode("utf-8")  # no lone surrogate is left anywhere in the record
    assert "\ufffd" in pr.title and "\ufffd" in pr.author and "\ufffd" in pr.labels[1]
    assert "\ufffd" in pr.files[0].path and "\ufffd" in (pr.files[0].patch or "")
    assert "\ufffd" in (pr.files[1].previous_path or "")
    assert "\ufffd" in pr.review_comments[0].body and "\ufffd" in (pr.review_comments[0].path or "")
    assert "\ufffd" in pr.reviews[0].author and "\ufffd" in pr.comments[0].body
    assert "\ufffd" in pr.linked_issues[0].title and "\ufffd" in pr.linked_issues[0].body


def test_the_hash_helpers_take_any_text() -> None:
    # A PR built without validation (model_construct, model_copy) still hashes: the helpers never crash.
    raw = PullRequest.model_validate(_record(101, "2026-11-17T10:00:00Z")).model_copy(update={"title": LONE})
    assert len(pr_hash(raw)) == 64
    assert pr_hash(raw) != pr_hash(raw.model_copy(update={"title": "other"}))
    assert len(draft_key(raw, ["core"], prompt_version="v1", model="m", language="en", budget=1000)) == 64


def test_a_week_of_lone_surrogates_runs_through_draft_review_render_outbox_and_site(tmp_path: Path) -> None:
    source = _write_jsonl(tmp_path / "week.jsonl", _week())
    state = tmp_path / "state.sqlite"
    args = ["run", "--source", f"jsonl:{source}", "--out", str(tmp_path / "out"), "--state", str(state),
            "--language", "en", "--since", "2026-11-16", "--until", "2026-11-23", "--readers", str(_readers(tmp_path))]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    digest = json.loads((tmp_path / "out" / "digest.json").read_text(encoding="utf-8"))
    assert {e["number"] for e in digest["entries"]} == {101, 102}
    assert any("\ufffd" in e["title"] for e in digest["entries"])
    assert list((tmp_path / "out" / "outbox").rglob("*")), "nothing reached the outbox"
    assert _all_utf8(tmp_path / "out") > 3

    # The editor's review, with edits whose text holds lone surrogates too (the resume form is JSON as well).
    with open_store(state) as store:
        record = records.load(store, WEEK)
        assert record is not None
        decision = ReviewDecision(decision="send", approver=_t("lin"), first="102", edits=[
            EntryEdit(number=102, verdict="deep-read", headline=_t("Edited headline"), text=_t("Edited text."))])
        reviewed = apply_decision(record.edition, decision)
        record_review(store, record.edition, reviewed, first=[102])
    again = CliRunner().invoke(app, [*args[:4], str(tmp_path / "again"), *args[5:], "--resend-edition"])
    assert again.exit_code == 0, again.output
    entry = next(e for e in json.loads((tmp_path / "again" / "digest.json").read_text(encoding="utf-8"))["entries"]
                 if e["number"] == 102)
    assert entry["headline"].startswith("Edited headline") and "\ufffd" in entry["headline"]
    assert _all_utf8(tmp_path / "again") > 3

    site = CliRunner().invoke(app, ["site", "--state", str(state), "--out", str(tmp_path / "archive")])
    assert site.exit_code == 0, site.output
    assert _all_utf8(tmp_path / "archive" / "site") > 3


def test_a_week_of_lone_surrogates_drafts_with_the_openai_drafter_and_its_cache(tmp_path: Path) -> None:
    from tests.servers.openai_server import OpenAIServer
    from tests.test_packing import MODEL, run_week

    def entry_prompts(server: OpenAIServer) -> list[str]:
        return [m["content"] for body in server.requests for m in body["messages"]
                if m["role"] == "user" and "<pr-data>" in m["content"] and "PR #" in m["content"]]

    with OpenAIServer(models=(MODEL,)) as server:
        first = run_week(_week(), tmp_path, server)
        sent = entry_prompts(server)
        server.reset_counts()
        again = run_week(_week(), tmp_path, server, resend_edition=True)  # the same week: drafts from the cache
        assert not entry_prompts(server)
    assert len(sent) == 2 and all("\ufffd" in p and "\ud800" not in p for p in sent)  # the model saw U+FFFD
    assert {e["number"] for e in first["entries"]} == {101, 102}
    assert [e["headline"] for e in first["entries"]] == [e["headline"] for e in again["entries"]]
    assert _all_utf8(tmp_path / "out") > 1


def test_a_github_week_of_lone_surrogates_is_collected_and_run(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # The server sends the text as JSON ``\ud800`` escapes, as GitHub does for such text.
    from tests.servers.github_server import GitHubServer, make_state

    rows = _week()
    server = GitHubServer(make_state(rows, REPO, token="ghp_surrogate-test")).start()
    try:
        monkeypatch.setenv("GITHUB_TOKEN", "ghp_surrogate-test")
        result = CliRunner().invoke(app, [
            "run", "--source", "github", "--repo", REPO, "--github-url", server.url, "--out", str(tmp_path / "out"),
            "--state", str(tmp_path / "state.sqlite"), "--language", "en", "--since", "2026-11-16",
            "--until", "2026-11-23", "--readers", str(_readers(tmp_path))])
    finally:
        server.stop()
    assert result.exit_code == 0, result.output
    digest = json.loads((tmp_path / "out" / "digest.json").read_text(encoding="utf-8"))
    assert {e["number"] for e in digest["entries"]} == {101, 102}
    assert any("\ufffd" in e["title"] for e in digest["entries"])
    assert _all_utf8(tmp_path / "out") > 3


def test_a_models_answers_with_lone_surrogates_are_drafted_cached_and_sent(tmp_path: Path) -> None:
    from tests.servers.openai_server import OpenAIServer
    from tests.test_packing import MODEL, run_week

    rows = [{**r, "title": f"[Core] change {r['number']}", "body": ""} for r in _week()]
    with OpenAIServer(models=(MODEL,), default="surrogates") as server:
        digest = run_week(rows, tmp_path, server)
        again = run_week(rows, tmp_path, server, resend_edition=True)  # from the draft and answer caches
    # The SDK's strict JSON parser refuses a lone-surrogate escape: the entry is read again by json, with U+FFFD.
    headlines = [e["headline"] for e in digest["entries"]]
    assert {e["drafter"] for e in digest["entries"]} != {"offline-fallback"}
    assert all(h.endswith("\ufffd") for h in headlines), headlines
    assert [e["headline"] for e in again["entries"]] == headlines  # from the draft cache
    assert digest["lede"].startswith("This \ufffdweek") and again["lede"] == digest["lede"]
    assert _all_utf8(tmp_path / "out") > 1
