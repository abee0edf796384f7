"""PR records from a real repository's history, for benchmarks that want a realistic week instead of the sample
week copied: the last N commits of the default branch before a date, each one merged PR (its number from the
``(#N)`` GitHub puts in a squash commit's subject), with its real title, message, author, files and line counts.

    .venv/bin/python -m benchmarks.real_week /work/.mirror/vllm-project+vllm-ascend/repo --until 2026-05-31 --prs 300

The mirrors under /work/.mirror are read-only bare clones; nothing of their code is kept, only what a source
JSONL line holds (``docs/contracts.md``).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

_NUMBER = re.compile(r"\(#(\d+)\)\s*$")
_RECORD, _FIELD = "\x1e", "\x1f"


def repo_of(git_dir: Path) -> str:
    """``/work/.mirror/owner+name/repo`` → ``owner/name``."""
    folder = git_dir.name if git_dir.name != "repo" else git_dir.parent.name
    return folder.replace("+", "/", 1)


def history_records(git_dir: Path, n: int, until: str) -> list[dict[str, Any]]:
    """The last ``n`` commits of the first-parent history before ``until`` that name their PR, oldest first."""
    repo = repo_of(git_dir)
    out = subprocess.run(
        ["git", f"--git-dir={git_dir}", "log", "--first-parent", f"--until={until}", f"-n{n * 2}", "--no-renames",
         f"--format={_RECORD}%H{_FIELD}%an{_FIELD}%aI{_FIELD}%cI{_FIELD}%s{_FIELD}%b{_FIELD}", "--numstat"],
        check=True, capture_output=True, text=True, encoding="utf-8", errors="replace").stdout
    records: list[dict[str, Any]] = []
    for chunk in out.split(_RECORD)[1:]:
        sha, author, created, merged, subject, body, stats = chunk.split(_FIELD, 6)
        match = _NUMBER.search(subject)
        if not match:
            continue
        number = int(match.group(1))
        files = []
        for line in stats.strip().splitlines():
            added, deleted, path = (line.split("\t", 2) + ["", ""])[:3]
            if path:
                files.append({"path": path, "additions": int(added) if added.isdigit() else 0,
                              "deletions": int(deleted) if deleted.isdigit() else 0, "status": "modified"})
        records.append({
            "number": number, "url": f"https://github.com/{repo}/pull/{number}",
            "title": _NUMBER.sub("", subject).strip(), "author": author or "ghost", "created_at": created,
            "merged_at": merged, "labels": [], "body": body.strip(), "files": files,
            "additions": sum(f["additions"] for f in files), "deletions": sum(f["deletions"] for f in files),
            "review_comments": [], "merge_commit": sha,
        })
        if len(records) == n:
            break
    return sorted(records, key=lambda r: (r["merged_at"], r["number"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("git_dir", type=Path)
    parser.add_argument("--until", default="2026-05-31")
    parser.add_argument("--prs", type=int, default=300)
    args = parser.parse_args()
    for record in history_records(args.git_dir, args.prs, args.until):
        sys.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
