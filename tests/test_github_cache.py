"""The collector's cache in the state store, on SQLite and PostgreSQL: stored PRs, ETags, re-runs that reuse them."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from prdigest.collect.github import GitHubSource
from prdigest.collect.github.cache import PullCache
from prdigest.collect.github.client import default_retry
from prdigest.kernel.models import PullRequest
from prdigest.kernel.window import Window
from prdigest.state.store import LazyStore, open_store
from tests.conftest import SAMPLE
from tests.servers.github_data import load_jsonl, make_state
from tests.servers.github_server import GitHubServer

REPO = "vllm-project/vllm"
TOKEN = "ghp_test-token-never-shown-0123456789"
WEEK = Window(datetime(2026, 11, 16, tzinfo=timezone.utc), datetime(2026, 11, 23, tzinfo=timezone.utc))
T0 = datetime(2026, 11, 20, 12, 0, tzinfo=timezone.utc)


def pr(number: int, title: str = "a change") -> PullRequest:
    return PullRequest(number=number, url=f"https://github.com/{REPO}/pull/{number}", title=title, author="lin",
                       merged_at=T0, body="100% of the 'body' ? stays as is")


def test_put_get_and_replace_on_both_backends(state_location: str) -> None:
    with open_store(state_location) as store:
        cache = PullCache(store, "vLLM-Project/vLLM")  # repo names are case-insensitive on GitHub
        PullCache(store, REPO)  # a second migrate is a no-op
        cache.put(T0, pr(1), {"review_comments": [{"body": "nit"}]}, {"files": 'W/"abc"'})
        cache.put(T0, pr(2), {}, {})
        cache.put(T0 + timedelta(hours=1), pr(1, "retitled"), {}, {"files": 'W/"def"'})  # replaces, never adds
        found = cache.get_many([1, 2, 3])
        assert sorted(found) == [1, 2] and cache.count() == 2
        assert found[1].pr.title == "retitled" and found[1].updated_at == T0 + timedelta(hours=1)
        assert found[1].etags == {"files": 'W/"def"'} and found[1].parts == {}
        assert found[2].pr.body == "100% of the 'body' ? stays as is"
        assert PullCache(store, "other/repo").get_many([1, 2]) == {}


def test_get_many_reads_more_numbers_than_one_batch(state_location: str) -> None:
    with open_store(state_location) as store:
        cache = PullCache(store, REPO)
        with store.transaction():  # one commit, not 600 fsyncs
            for number in range(1, 1201, 2):
                cache.put(T0, pr(number), {}, {})
        assert len(cache.get_many(list(range(1, 1201)))) == 600


@pytest.mark.slow
def test_a_rerun_on_the_shared_state_reuses_every_stored_pr(state_location: str) -> None:
    server = GitHubServer(make_state(load_jsonl(SAMPLE), REPO, token=TOKEN)).start()
    try:
        def source() -> GitHubSource:
            return GitHubSource(REPO, token=TOKEN, base_url=server.url, state=LazyStore(state_location), concurrency=4,
                                retry=default_retry(backoff_factor=0.001, total=3))
        first = source()
        prs = first.collect(WEEK)
        assert len(prs) == first.stats.fetched > 0 and first.stats.reused == 0
        second = source()  # another worker: another connection to the same state
        assert second.collect(WEEK) == prs
        assert second.stats.reused == len(prs) and second.stats.fetched == 0
    finally:
        server.stop()
