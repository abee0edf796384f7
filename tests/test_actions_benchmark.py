"""benchmarks/actions.py: a PR reverted within the week and its revert ask nothing, as the connect step leaves
them; the figures count what the labels and the drafts say (a JSONL week written here, drafted offline)."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.actions import figures, main, reverted_within, table
from benchmarks.judgement import from_source

REPO = "o/r"


def _pr(number: int, title: str, body: str, before: str, after: str) -> dict[str, object]:
    patch = f"@@ -1 +1 @@\n-{before}\n+{after}\n"
    return {"number": number, "url": f"https://github.com/{REPO}/pull/{number}", "title": title, "author": "dev",
            "created_at": "2026-11-16T09:00:00Z", "merged_at": "2026-11-16T10:00:00Z", "labels": [], "body": body,
            "files": [{"path": "requirements.txt", "additions": 1, "deletions": 1, "status": "modified",
                       "patch": patch}], "additions": 1, "deletions": 1, "review_comments": []}


def test_an_upgrade_and_its_revert_in_one_week_ask_nothing(tmp_path: Path) -> None:
    week = tmp_path / "week.jsonl"
    rows = [_pr(1, "Bump mooncake to 0.3.8", "", "mooncake==0.3.7", "mooncake==0.3.8"),
            _pr(2, 'Revert "Bump mooncake to 0.3.8 (#1)"', "Reverts #1", "mooncake==0.3.8", "mooncake==0.3.7"),
            _pr(3, "Upgrade torch", "", "torch==2.9.0", "torch==2.10.0")]
    week.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    drafts = from_source(week)
    assert all(drafts[n].action for n in (1, 2, 3))  # each moves a pin on its own
    kept = reverted_within(drafts, REPO)
    assert [n for n in sorted(kept) if kept[n].action] == [3]
    labels = {"ana": {1: {"verdict": "skim", "action": ["Upgrade mooncake to 0.3.8 before pulling main."]},
                      3: {"verdict": "skim", "action": ["Set your own IRQ pinning aside."]}}}
    got = figures(kept, labels)
    # #1 was asked and is no entry now: a miss and an upgrade missed; #3 is an entry, whatever its label says
    assert (got["entries"], got["missed"], got["upgrades missed"]) == ([3], {"ana": [1]}, [1])


def test_a_kept_run_is_written_with_its_own_load_average(tmp_path: Path) -> None:
    week = {"entries": [3], "confirmed": [3], "confirmed by both": [], "missed": {"ana": [1]},
            "missed by both": [], "upgrades missed": [1], "labelled": [1, 3]}
    kept = tmp_path / "after.json"
    kept.write_text(json.dumps({"labellers": {"2026-W01": ["ana"]}, "weeks": {"2026-W01": week}, "load": 7.25}),
                    encoding="utf-8")
    # no clone is read: the weeks' figures are the kept run's, the load average the one it recorded
    text = main(["--git", str(tmp_path / "absent"), "--repo", REPO, "--weeks", "2026-W01", "--figures", str(kept)])
    assert "\n".join(table({"2026-W01": week}, {"2026-W01": ["ana"]})) in text
    assert text.rstrip().endswith("Load average: 7.25 (2 cores, shared).")
