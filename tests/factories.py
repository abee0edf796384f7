"""Small builders for domain objects used across tests."""

from __future__ import annotations

from datetime import datetime, timezone

from prdigest.kernel.links import pr_link
from prdigest.kernel.models import Edition, Entry, EntryStatus, Verdict

WEEK = datetime(2026, 11, 16, tzinfo=timezone.utc)


def entry(number: int, subsystems: list[str], verdict: str = "skim", *, status: str = "approved",
          title: str | None = None, **extra: object) -> Entry:
    return Entry(
        number=number, url=pr_link("vllm-project/vllm", number),
        title=title if title is not None else f"PR {number}", author="alice", merged_at=WEEK,
        subsystems=subsystems, verdict=Verdict(verdict), headline=f"Headline {number}",
        rationale=f"Rationale {number}", focus=[f"Look at `f{number}.py`"], followups=[],
        additions=10, deletions=2, files_changed=1, status=EntryStatus(status), **extra,
    )


def edition(entries: list[Entry], language: str = "zh-CN") -> Edition:
    return Edition(repo="vllm-project/vllm", since=WEEK, until=datetime(2026, 11, 23, tzinfo=timezone.utc),
                   language=language, generated_at=WEEK, entries=entries)


def openai_drafter(settings, **kwargs):  # an OpenAIDrafter
    """The OpenAI drafter over its own state store at ``settings.state``, as the composition root would hand
    it one; closing the drafter closes that store too."""
    from prdigest.draft.llm import OpenAIDrafter
    from prdigest.state.store import open_store

    store = open_store(settings.state)
    drafter = OpenAIDrafter.from_settings(settings, conn=store, **kwargs)
    closing = drafter.close

    def close() -> None:
        try:
            closing()
        finally:
            store.close()

    drafter.close = close  # type: ignore[method-assign]
    return drafter


def publish_site(state, out_dir, site_url=None, *, edition=None, repo=None, link_hosts=(), vocabularies=None,
                 impact=False):  # a PublishedSite
    """``prdigest.publish.site.publish`` with the shipped site renderer, as ``digest site`` calls it (recording
    ``edition`` first, when given, as a run's publish step does); ``state`` is an open store or a state file
    (opened and closed here)."""
    from prdigest.publish.site import Archive, publish
    from prdigest.state.store import Store, open_store
    from renderers.site import build_site, site_base

    if not isinstance(state, Store):
        with open_store(state) as store:
            return publish_site(store, out_dir, site_url, edition=edition, repo=repo, link_hosts=link_hosts,
                                vocabularies=vocabularies, impact=impact)
    archive = Archive(build_site, site_url, link_hosts, vocabularies, impact, site_base)
    return publish(state, out_dir, archive, edition=edition, repo=repo).site


def open_ledger(location, *, lease: float = 300.0, patience: float = 10.0, busy_timeout: float = 30.0,
                retries: int = 5):  # a Ledger
    """The ledger over its own connection to the state database at ``location`` (a test or a benchmark plays
    a separate process here; the product hands the ledger the run's store)."""
    from prdigest.deliver.ledger import Ledger
    from prdigest.state.store import open_store

    return Ledger(open_store(location, busy_timeout=busy_timeout, retries=retries), lease=lease, patience=patience)
