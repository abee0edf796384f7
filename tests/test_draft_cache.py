"""The draft cache in the state store, on SQLite and PostgreSQL, shared by drafting threads."""

from __future__ import annotations

import threading

from prdigest.draft.cache import DraftCache
from prdigest.kernel.models import DraftEntry, Verdict
from prdigest.state.store import open_store


def draft(number: int, headline: str = "h") -> DraftEntry:
    return DraftEntry(number=number, headline=headline, verdict=Verdict.SKIM, rationale="50% faster; 'quoted' ?",
                      tokens_in=10, tokens_out=5)


def test_put_get_and_replace_on_both_backends(state_location: str) -> None:
    with open_store(state_location) as store:
        cache = DraftCache(store)
        DraftCache(store)  # a second migrate is a no-op
        cache.put("k1", draft(1), model="m", language="en", prompt_version="v1")
        cache.put("k1", draft(1, "newer"), model="m", language="en", prompt_version="v2")  # replaces
        assert cache.get("k1") == draft(1, "newer") and cache.get("nope") is None and len(cache) == 1
    with open_store(state_location) as again:  # committed at once: another process sees it
        assert DraftCache(again).get("k1") == draft(1, "newer")


def test_drafting_threads_share_one_cache(state_location: str) -> None:
    with open_store(state_location) as store:
        cache = DraftCache(store)

        def work(offset: int) -> None:
            for n in range(offset, offset + 25):
                cache.put(f"k{n}", draft(n), model="m", language="zh-CN", prompt_version="v")
                assert cache.get(f"k{n}") == draft(n)

        threads = [threading.Thread(target=work, args=(i * 100,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(cache) == 100
