"""Merged PRs' merge commit shas kept in the state store, so a re-run finds each PR's cached facts without
listing the closed PRs again (a merged PR's ``merge_commit_sha`` never changes)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from prdigest.kernel.storage import Store

COMPONENT = "github-merge-commits"
#: Append-only: migrations[i] takes this component's schema from version i to i + 1.
MIGRATIONS = [
    """CREATE TABLE github_merge_commits (
         repo   TEXT    NOT NULL,
         number INTEGER NOT NULL,
         sha    TEXT    NOT NULL,
         PRIMARY KEY (repo, number)
       )""",
]

_BATCH = 500  # under SQLite's default limit of 999 bound variables


class MergeCommits:
    """PR number → merge commit sha, for one repo."""

    def __init__(self, store: Store, repo: str) -> None:
        store.migrate(COMPONENT, MIGRATIONS)
        self._store = store
        self._repo = repo.lower()

    def get_many(self, numbers: Sequence[int]) -> dict[int, str]:
        """The stored shas of those of ``numbers`` that have one."""
        wanted = sorted(set(numbers))
        found: dict[int, str] = {}
        for start in range(0, len(wanted), _BATCH):
            chunk = wanted[start:start + _BATCH]
            marks = ", ".join("?" for _ in chunk)
            for number, sha in self._store.fetchall(
                    f"SELECT number, sha FROM github_merge_commits WHERE repo = ? AND number IN ({marks})",
                    (self._repo, *chunk)):
                found[int(number)] = str(sha)
        return found

    def find(self, numbers: Sequence[int], listing: Callable[[], tuple[Mapping[int, str], int]]
             ) -> tuple[dict[int, str], int]:
        """The sha of each of ``numbers`` that has one, and the pages ``listing`` read: the stored shas, and only
        when one is missing, those ``listing`` gives (the closed-PR list: PR number → sha, and its pages), kept
        for the next run. A PR the listing gives no sha for is asked again next run."""
        found = self.get_many(numbers)
        if all(n in found for n in numbers):
            return found, 0
        listed, pages = listing()
        fresh = {n: listed[n] for n in set(numbers) if n not in found and n in listed}
        self.put_many(fresh)
        return {**found, **fresh}, pages

    def put_many(self, shas: Mapping[int, str]) -> None:
        """Keep each PR's sha (replacing a stored one)."""
        if shas:
            self._store.executemany(
                "INSERT INTO github_merge_commits (repo, number, sha) VALUES (?, ?, ?) "
                "ON CONFLICT (repo, number) DO UPDATE SET sha = excluded.sha",
                [(self._repo, number, sha) for number, sha in shas.items()])
