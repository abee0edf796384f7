"""A week of an invented database engine, `acme/riverdb`, that no rules file, cue list or ranking was tuned on.

``build_week(seed)`` makes 300 merged PRs (seeded, so every run is the same) over folders a database engine
has (storage/, query/, replication/, wire/, txn/, catalog/, docs/), with realistic titles, bodies and
changed files. Some bodies refer to earlier PRs of the same week in the prose their authors would write,
in English and Chinese (:data:`PLANTED` says which and what kind); a few mention issue numbers that are
not PRs at all.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from prdigest.kernel.links import pr_link

REPO = "acme/riverdb"
SINCE = datetime(2026, 11, 9, tzinfo=timezone.utc)  # a Monday
UNTIL = SINCE + timedelta(days=7)
COUNT = 300
AUTHORS = ["mira", "tobias", "chen-wei", "li-na", "okafor", "sasha", "priya", "jules", "kenji", "ana"]

#: folder → (files, title templates, what the change is about)
AREAS: dict[str, tuple[list[str], list[str], list[str]]] = {
    "storage": (["storage/wal.rs", "storage/btree.rs", "storage/page_cache.rs", "storage/compaction.rs",
                 "storage/checksum.rs", "storage/sstable.rs"],
                ["Speed up {x} in the page cache", "Fix torn writes in {x}", "Bound memory used by {x}",
                 "Make {x} crash-safe on fsync failure", "Add metrics for {x}"],
                ["WAL segment recycling", "B-tree node splits", "compaction scheduling", "checksum verification",
                 "SSTable index blocks", "page eviction"]),
    "query": (["query/planner.rs", "query/optimizer.rs", "query/exec/hash_join.rs", "query/exec/sort.rs",
               "query/parser.rs"],
              ["Push down {x} in the planner", "Fix wrong results from {x}", "Cost model for {x}",
               "Vectorize {x}", "Support {x} in EXPLAIN ANALYZE"],
              ["hash joins", "ORDER BY with LIMIT", "correlated subqueries", "window functions",
               "predicate pushdown", "index-only scans"]),
    "replication": (["replication/raft.rs", "replication/snapshot.rs", "replication/follower.rs",
                     "replication/lag.rs"],
                    ["Throttle {x} under load", "Fix split-brain in {x}", "Stream {x} instead of buffering",
                     "Retry {x} with backoff", "Report {x} in the admin API"],
                    ["snapshot transfer", "leader election", "log shipping", "follower catch-up",
                     "replication lag", "membership changes"]),
    "wire": (["wire/protocol.rs", "wire/handshake.rs", "wire/tls.rs", "wire/codec.rs"],
             ["Negotiate {x} in the handshake", "Fix {x} for pipelined clients", "Reject oversized {x}",
              "Add {x} to the wire protocol", "Cap {x} per connection"],
             ["TLS 1.3 session resumption", "prepared statement handles", "compression", "cancel requests",
              "protocol version 4 frames", "row batches"]),
    "txn": (["txn/mvcc.rs", "txn/locks.rs", "txn/deadlock.rs", "txn/isolation.rs"],
            ["Fix {x} under serializable isolation", "Shorten {x}", "Detect {x} earlier", "Trace {x}"],
            ["lock waits", "write skew", "deadlock cycles", "MVCC garbage collection", "long transactions"]),
    "catalog": (["catalog/schema.rs", "catalog/migrations.rs", "catalog/stats.rs"],
                ["Online {x}", "Fix {x} after a restart", "Cache {x}"],
                ["ALTER TABLE ADD COLUMN", "table statistics", "schema versions", "index builds"]),
    "docs": (["docs/operations.md", "docs/replication.md", "docs/sql-reference.md", "README.md"],
             ["Document {x}", "Fix typos in the {x} guide", "Clarify {x}"],
             ["backup and restore", "replication setup", "the SQL reference", "tuning checkpoints"]),
}
WEIGHTS = {"storage": 20, "query": 20, "replication": 15, "wire": 12, "txn": 12, "catalog": 9, "docs": 12}


@dataclass(frozen=True)
class Planted:
    """A reference an author wrote in a body: PR ``source`` names PR ``target`` with this kind."""

    source: int
    kind: str
    target: int


#: (index of the referring PR, its body, [(kind, index of the referred PR)]). Indexes, not numbers: the
#: numbers are drawn by the seed. The referred PRs are earlier in the week.
_PROSE = [
    (120, "Reverts #{a}; it caused flaky failover tests on three runners.\n\nWe'll land it again once the "
          "election timeout is fixed.", [("reverts", 100)]),
    (160, "Second try at #{a} after it was reverted in #{b}. The election timeout now scales with the "
          "heartbeat interval, which was the cause of the flakes.", [("relands", 100)]),
    (140, "Corrects a mistake from #{a}: the checksum was computed before the page header was written, so "
          "every page read after a crash failed verification.", [("fixes", 110)]),
    (180, "Revert #{a} + #{b}\n\nBoth broke the handshake with clients older than protocol version 3.",
     [("reverts", 130), ("reverts", 150)]),
    (200, "回滚 #{a}，高负载下复制延迟明显升高，先撤回再分析。", [("reverts", 170)]),
    (210, "Follow-up to #{a}: also expose the planner's new statistics over the admin endpoint.",
     [("follow-up-of", 190)]),
    (230, "Part 2 of the compaction rework; part 1 was #{a}. This one moves the scheduler to its own thread.",
     [("part-of-series", 205)]),
    (250, "修复 #{a} 引入的 WAL 截断问题：恢复时最后一个段被错误地截短。", [("fixes", 220)]),
    (270, "Backport of #{a} to the release-0.9 branch; no changes beyond the conflict in lag.rs.",
     [("ports", 240)]),
]
#: Where the planted PRs' own area is fixed, so the story reads right (reverts of wire changes are wire…).
_AREA_OF = {100: "replication", 120: "replication", 160: "replication", 110: "storage", 140: "storage",
            130: "wire", 150: "wire", 180: "wire", 170: "replication", 200: "replication", 190: "query",
            210: "query", 205: "storage", 230: "storage", 220: "storage", 250: "storage", 240: "replication",
            270: "replication"}
#: What authors write when a change matters: the failure, its cause, the evidence (one PR in twelve or so).
_RICH = [
    "Root cause: {x} read the commit index before the term check, so after a partition heal a stale leader "
    "could acknowledge writes that were later lost. Reads silently returned wrong results for up to one "
    "election timeout.\n\nThe fix orders the checks and adds a Jepsen-style test that partitions the "
    "cluster 200 times; before the fix it lost acknowledged writes in 7 runs, after it in none.",
    "The default for {x} changes from `lazy` to `eager`: clients that relied on the old behaviour must set it "
    "explicitly. This is a breaking change for drivers older than 2.3.\n\nBenchmark (3 runs, 16 clients): "
    "p99 latency 41 ms -> 12 ms, throughput 18k -> 26k ops/s.",
    "{x} could return stale rows after a failover: the cache was keyed by table id only, and a re-created "
    "table reused the id. Queries silently produced wrong results until a restart.\n\nWe now key by "
    "(table id, schema version). Measured overhead: +0.4 % on the TPC-C mix.",
]
#: Bodies that mention numbers that are issues, not PRs (none is a PR of the week).
_ISSUES = {60: "Closes #{i}.", 90: "See the discussion in #{i} for the numbers.", 260: "Fixes #{i} reported by a user."}


def _numbers(rng: random.Random) -> tuple[list[int], list[int]]:
    drawn = sorted(rng.sample(range(7000, 7800), COUNT + 3))
    issues = [drawn.pop(rng.randrange(len(drawn))) for _ in range(3)]
    return drawn, issues


def build_week(seed: int = 20261109) -> tuple[list[dict], list[Planted], list[int]]:
    """The week's PRs (JSONL rows, merge order), the planted references, and the issue numbers in prose."""
    rng = random.Random(seed)
    numbers, issues = _numbers(rng)
    areas = list(WEIGHTS)
    prs: list[dict] = []
    planted: list[Planted] = []
    prose = {index: (body, refs) for index, body, refs in _PROSE}
    for index, number in enumerate(numbers):
        area = _AREA_OF.get(index) or rng.choices(areas, weights=[WEIGHTS[a] for a in areas])[0]
        paths, titles, topics = AREAS[area]
        topic = rng.choice(topics)
        title = rng.choice(titles).format(x=topic)
        body = (f"{topic.capitalize()} {rng.choice(['was slow', 'misbehaved', 'was hard to observe'])} "
                f"{rng.choice(['under heavy write load', 'on large clusters', 'after a failover'])}. "
                f"This change {rng.choice(['reworks', 'tightens', 'simplifies'])} it and adds a test.")
        if index not in prose and index not in _AREA_OF and rng.random() < 0.08:
            body = rng.choice(_RICH).format(x=topic.capitalize())
        if index in prose:
            template, refs = prose[index]
            targets = [numbers[i] for _, i in refs]
            if "{b}" in template and len(targets) == 1:  # the reland names the revert too
                targets.append(numbers[120])
            body = template.format(a=targets[0], b=targets[1] if len(targets) > 1 else "")
            planted += [Planted(number, kind, numbers[i]) for kind, i in refs]
            if index == 120:
                title = f"Revert \"{prs[100]['title']}\""
            elif index == 160:  # a reland keeps the original title, as authors do
                title = prs[100]["title"]
            elif index == 180:
                title = "Revert the handshake changes"
            elif index == 200:
                title = "回滚复制限流"
            elif index == 270:
                title = f"[0.9] {prs[240]['title']}"
        if index in _ISSUES:
            body += "\n\n" + _ISSUES[index].format(i=issues[list(_ISSUES).index(index)])
        files = []
        for path in rng.sample(paths, rng.randint(1, min(3, len(paths)))):
            big = rng.random() < 0.15
            files.append({"path": path, "additions": rng.randint(80, 600) if big else rng.randint(1, 60),
                          "deletions": rng.randint(0, 40), "status": "modified"})
        if area != "docs" and rng.random() < 0.6:
            files.append({"path": f"tests/{area}_test.rs", "additions": rng.randint(5, 80), "deletions": 0,
                          "status": "modified"})
        merged = SINCE + timedelta(minutes=30 + index * (7 * 24 * 60 - 60) // COUNT)
        prs.append({
            "number": number, "url": pr_link(REPO, number), "title": title,
            "author": rng.choice(AUTHORS), "created_at": (merged - timedelta(days=2)).isoformat(),
            "merged_at": merged.isoformat(), "labels": [], "body": body, "files": files,
            "additions": sum(f["additions"] for f in files), "deletions": sum(f["deletions"] for f in files),
        })
    return prs, planted, issues


def write_jsonl(prs: list[dict], path: Path) -> Path:
    """The week as a source JSONL file."""
    path.write_text("".join(json.dumps(pr, ensure_ascii=False) + "\n" for pr in prs), encoding="utf-8")
    return path

