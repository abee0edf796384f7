"""The discussion of a PR (prdigest/collect/discussion/): bots, linked issues, the order of its points, and what
the offline drafter makes of a reviewer's request or alternative."""

from __future__ import annotations

import pytest

from prdigest.collect.discussion import comments_total, is_bot, linked_numbers, points
from prdigest.draft.guidance import asks
from prdigest.draft.offline import OfflineDrafter
from prdigest.kernel.models import MAX_ISSUE_BODY, LinkedIssue, PullRequest

REPO = "vllm-project/vllm"


@pytest.mark.parametrize(("login", "kind", "bot"), [
    ("github-actions[bot]", None, True),
    ("dependabot[bot]", None, True),
    ("mergify", None, True),
    ("Mergify", None, True),
    ("coderabbitai", None, True),
    ("pytorch-bot", None, True),
    ("some-app", "Bot", True),     # GitHub says so
    ("njhill", None, False),
    ("robot-arm-dev", None, False),
    ("botanist", None, False),
    ("", None, False),
    (None, None, False),
])
def test_bots_are_app_accounts_known_automation_or_typed_bot(login, kind, bot) -> None:
    assert is_bot(login, kind) is bot


@pytest.mark.parametrize(("title", "body", "expected"), [
    ("Fix crash", "Fixes #31913", [31913]),
    ("Fix crash", "closes vllm-project/vllm#31913 and resolves: #31914", [31913, 31914]),
    ("x", "See issue #31000; FIX #31001", [31001, 31000]),                       # closing keywords first
    ("x", f"https://github.com/{REPO}/issues/42 explains it", [42]),
    ("x", "Follow-up to #41000", [41000]),                                      # may be a PR: the collector asks
    ("x", "fixes other/repo#5, `#77` in code, ```\nfixes #78\n```, <!-- fixes #79 -->", []),
    ("x", "Fixes #0012 and colour #fff", []),
    ("Revert #9 (#12)", "", [9]),                                              # never the PR itself (#12)
    ("x", " ".join(f"#{n}" for n in range(100, 120)), [100, 101, 102, 103]),   # at most four
])
def test_linked_numbers_closing_keywords_first_code_and_other_repos_never(title, body, expected) -> None:
    assert linked_numbers(title, body, REPO, number=12) == expected


def _pr(**fields: object) -> PullRequest:
    base = {"number": 7, "url": f"https://github.com/{REPO}/pull/7", "title": "[Core] Pool", "author": "amy",
            "merged_at": "2026-11-17T00:00:00Z", "additions": 300, "deletions": 20,
            "files": [{"path": "vllm/core/pool.py", "additions": 300, "deletions": 20}],
            "body": "Adds a pool allocator for KV blocks with a new reuse design."}
    return PullRequest.model_validate({**base, **fields})


def test_points_put_requests_then_reviews_then_remarks_then_the_authors_replies() -> None:
    pr = _pr(review_comments=[{"author": "amy", "body": "done"}, {"author": "rev", "body": "nit", "path": "a.py"}],
             reviews=[{"author": "ok", "state": "APPROVED", "body": "LGTM"},
                      {"author": "strict", "state": "CHANGES_REQUESTED", "body": "Split this PR"},
                      {"author": "quiet", "state": "APPROVED", "body": ""},
                      {"author": "ci[bot]", "state": "COMMENTED", "body": "coverage report"}],
             comments=[{"author": "mergify", "body": "rebased"}, {"author": "kai", "body": "Why not reuse BlockPool?"}])
    assert [(p.author, p.kind) for p in points(pr)] == [
        ("strict", "changes-requested"), ("ok", "approved"), ("rev", "inline"), ("kai", "comment"), ("amy", "inline")]
    assert comments_total(pr) == 5


def test_a_linked_issue_keeps_the_opening_of_its_description() -> None:
    issue = LinkedIssue(number=5, title=None, body="x" * 5000, state=None)  # type: ignore[arg-type]
    assert (issue.title, len(issue.body), issue.state) == ("", MAX_ISSUE_BODY, "")


def test_the_offline_drafter_quotes_a_request_and_an_alternative_attributed_and_defused() -> None:
    pr = _pr(reviews=[{"author": "njhill", "state": "CHANGES_REQUESTED",
                       "body": "Please keep the old `free()` path\u202e until the scheduler migrates."}],
             comments=[{"author": "kai", "body": "Why not reuse the existing BlockPool instead of a new class?"},
                       {"author": "mergify[bot]", "body": "This PR is now in conflict: instead, rebase it"},
                       {"author": "amy", "body": "Could we instead land this first? (the author)"}])
    found = asks(pr)
    assert [(a.login, a.kind) for a in found] == [("njhill", "request"), ("kai", "alternative")]
    assert "`" not in found[0].quote and "\u202e" not in found[0].quote  # never a code span, no bidi trick
    for language, said in (("en", "Review: `@njhill` asks for a change: “Please keep the old 'free()' path"),
                           ("zh-CN", "评审 `@njhill` 要求修改：“Please keep the old 'free()' path")):
        draft = OfflineDrafter().draft(pr, ["kv-cache"], language)  # type: ignore[arg-type]
        assert any(point.startswith(said) for point in draft.focus), draft.focus
        assert not any("mergify" in p or "(the author)" in p for p in draft.focus)


def test_a_hostile_login_cannot_break_out_of_its_code_span() -> None:
    pr = _pr(reviews=[{"author": "x` <!channel> `y", "state": "CHANGES_REQUESTED", "body": "Please rename it"}])
    (ask,) = asks(pr)
    assert ask.login == "xchannely"


def test_a_pr_without_reviews_or_comments_drafts_as_before() -> None:
    """The sample week carries review comments only: its drafts do not depend on the discussion code."""
    plain = _pr(review_comments=[{"author": "rev", "body": "Consider moving this into the scheduler later on."}])
    assert asks(plain) == []
    draft = OfflineDrafter().draft(plain, ["kv-cache"], "en")
    assert not any("@" in p for p in draft.focus)
