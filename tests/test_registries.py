"""Drafters and sources as registries, like media: one registration adds a drafter or a source that the
pipeline, ``digest eval`` and the flow use without a line of theirs changing; unknown names are refused in
one line listing the known ones; and a run opens its state store once, for every component."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest
from pydantic import SecretStr, ValidationError

from flows.media import default_media
from prdigest.collect.registry import SOURCES, SourceContext, SourceKind
from prdigest.collect.sources import JsonlSource, Source, read_jsonl, sample_week_path
from prdigest.draft import Drafter
from prdigest.draft.offline import OfflineDrafter
from prdigest.draft.registry import DRAFTERS, DrafterKind, DraftingContext
from prdigest.evaluation.results import EvalConfig
from prdigest.evaluation.runner import run_eval
from prdigest.kernel.config import Settings, load_settings
from prdigest.kernel.errors import ConfigError
from prdigest.kernel.models import DraftEntry, Language, PullRequest
from prdigest.pipeline.compose import RunOptions, build_services, make_drafter
from prdigest.pipeline.edition import EditionPipeline
from prdigest.state.store import LazyStore, state_store
from tests.plugin_support import install_distribution
from tests.servers.github_server import GitHubServer, make_state, synthetic_week


class ShoutyDrafter:
    """A team's own drafter: the offline draft with its headline in capitals, noting the threads it ran on."""

    name = "shouty:v1"

    def __init__(self, vocabulary: object) -> None:
        self.inner = OfflineDrafter(vocabulary)  # type: ignore[arg-type]
        self.threads: set[str] = set()

    def check(self) -> None:
        """Nothing to check."""

    def close(self) -> None:
        """Nothing to release."""

    def draft(self, pr: PullRequest, subsystems: list[str], language: Language, context: object = None) -> DraftEntry:
        self.threads.add(threading.current_thread().name)
        time.sleep(0.01)  # long enough that the pool's other threads take PRs too
        draft = self.inner.draft(pr, subsystems, language)
        return draft.model_copy(update={"headline": draft.headline.upper(), "drafter": self.name,
                                        "tokens_in": 10, "tokens_out": 5})


BUILT: list[ShoutyDrafter] = []


def _shouty(context: DraftingContext) -> Drafter:
    BUILT.append(ShoutyDrafter(context.vocabulary))
    return BUILT[-1]


@pytest.fixture
def shouty() -> Iterator[DrafterKind]:
    kind = DrafterKind("shouty", "capital headlines", build=_shouty, concurrency=lambda settings: 3,
                       label=lambda settings: "shouty:v1", cost=lambda i, o, settings: (i + o) / 1000,
                       usage=lambda entries, settings: f"{len(entries)} shouted")
    DRAFTERS.register(kind)
    BUILT.clear()
    try:
        yield kind
    finally:
        DRAFTERS.unregister("shouty")


def _run(options: RunOptions) -> EditionPipeline:
    pipeline = EditionPipeline(build_services(options, load_settings(**options.settings_overrides()), default_media()))
    try:
        pipeline.run()
    finally:
        pipeline.services.close()
    return pipeline


def test_a_registered_drafter_drafts_an_edition_with_its_own_concurrency_name_and_cost(shouty, tmp_path: Path) -> None:
    options = RunOptions(source="sample", drafter="shouty", out=str(tmp_path / "out"), language="en",
                         state=str(tmp_path / "state.sqlite"))
    _run(options)
    digest = json.loads((tmp_path / "out" / "digest.json").read_text(encoding="utf-8"))
    n = len(read_jsonl(sample_week_path()))
    assert digest["drafter"] == "shouty:v1"
    assert digest["cost_usd"] == pytest.approx(n * 15 / 1000)
    assert all(e["drafter"] == "shouty:v1" and e["headline"] == e["headline"].upper() for e in digest["entries"])
    # Drafted on the kind's 3 threads (not in line, not on llm_concurrency's 8).
    assert len(BUILT) == 1 and 1 < len(BUILT[0].threads) <= 3


def test_digest_eval_builds_the_same_registered_drafter(shouty, tmp_path: Path) -> None:
    gold = tmp_path / "gold.jsonl"
    records = [json.loads(line) for line in sample_week_path().read_text(encoding="utf-8").splitlines()[:4]]
    gold.write_text("".join(json.dumps({**r, "gold": {"verdict": "skim", "subsystems": ["other"]}}) + "\n"
                            for r in records), encoding="utf-8")
    run = run_eval(EvalConfig(gold=str(gold), drafter="shouty"), Settings(state=tmp_path / "state.sqlite"))
    assert run.info.drafter == "shouty:v1" and len(BUILT) == 1
    assert [r.drafter for r in run.rows] == ["shouty:v1"] * 4
    assert all(r.cost_usd == pytest.approx(0.015) for r in run.rows)


@pytest.mark.parametrize("model", [RunOptions, EvalConfig])
def test_an_unknown_drafter_is_refused_naming_the_known_ones(model: type, tmp_path: Path) -> None:
    extra = {"gold": "x.jsonl"} if model is EvalConfig else {}
    with pytest.raises(ValidationError, match=r"--drafter 'gpt5': unknown drafter; use one of offline, openai"):
        model(drafter="gpt5", **extra)
    with pytest.raises(ConfigError, match="use one of offline, openai"):
        DRAFTERS["gpt5"]


def test_the_shipped_drafters_say_their_concurrency_name_and_cost() -> None:
    settings = Settings(llm_concurrency=6, model="m1", llm_price_in=1.0, llm_price_out=2.0)
    offline, openai = DRAFTERS["offline"], DRAFTERS["openai"]
    assert (offline.concurrency(settings), offline.title(settings), offline.cost(10**6, 10**6, settings)) == (1, "offline", 0)
    assert (openai.concurrency(settings), openai.title(settings)) == (6, "openai:m1")
    assert openai.cost(10**6, 10**6, settings) == pytest.approx(3.0)
    assert offline.usage is None and offline.complete is None and openai.usage is not None


def test_a_registered_drafter_name_twice_is_refused(shouty) -> None:
    with pytest.raises(ValueError, match="already registered"):
        DRAFTERS.register(shouty)


# ---- sources --------------------------------------------------------------------------------------
@pytest.mark.parametrize(("value", "name", "argument"), [
    ("sample", "sample", ""),
    ("github", "github", ""),
    ("jsonl:week.jsonl", "jsonl", "week.jsonl"),
    ("jsonl:C:/data/week.jsonl", "jsonl", "C:/data/week.jsonl"),  # only the first colon separates
])
def test_source_forms_name_a_kind_and_its_argument(value: str, name: str, argument: str) -> None:
    kind, arg = SOURCES.parse(value)
    assert (kind.name, arg) == (name, argument)


@pytest.mark.parametrize("value", ["s3://bucket", "jsonl", "jsonl:", "jsonl:  ", "github:org/repo", "sample:x",
                                   "", "GitHub", "../etc/passwd"])
def test_a_bad_source_is_refused_listing_every_form(value: str) -> None:
    with pytest.raises(ConfigError, match=r"use github or jsonl:PATH or sample$"):
        SOURCES.parse(value)
    with pytest.raises(ValidationError, match="use github or jsonl:PATH or sample"):
        RunOptions(source=value)


def test_a_registered_source_feeds_the_pipeline(tmp_path: Path) -> None:
    seen: list[SourceContext] = []

    def build(argument: str, context: SourceContext) -> Source:
        seen.append(context)
        return JsonlSource(sample_week_path().parent / argument, context.repo)

    SOURCES.register(SourceKind("bundled", "a file shipped with pr-digest", build=build, argument="NAME"))
    try:
        options = RunOptions(source=f"bundled:{sample_week_path().name}", out=str(tmp_path / "out"),
                             state=str(tmp_path / "state.sqlite"), language="en")
        _run(options)
    finally:
        SOURCES.unregister("bundled")
    digest = json.loads((tmp_path / "out" / "digest.json").read_text(encoding="utf-8"))
    assert len(digest["entries"]) == len(read_jsonl(sample_week_path()))
    assert seen[0].store is not None  # the run's one store is offered to every source


# ---- one state store ------------------------------------------------------------------------------
def test_a_run_hands_one_state_store_to_the_ledger_the_github_cache_and_the_draft_cache(tmp_path: Path) -> None:
    since = datetime(2026, 11, 16, tzinfo=timezone.utc)
    server = GitHubServer(make_state(synthetic_week(3, repo="o/r", since=since, days=1), "o/r", token="t0k3n"))
    server.start()
    settings = Settings(state=tmp_path / "state.sqlite", openai_api_key=SecretStr("EMPTY"),
                        github_token=SecretStr("t0k3n"), github_url=server.url)
    # With a rules file: a repo without one reads (or keeps) its proposed subsystems in the store while it is built.
    (tmp_path / "rules.yaml").write_text("subsystems:\n  code: {paths: ['.']}\n", encoding="utf-8")
    (tmp_path / "readers.yaml").write_text("readers:\n  - {id: all, name: All, email: a@example.com}\n",
                                           encoding="utf-8")
    options = RunOptions(source="github", repo="o/r", drafter="openai", since="2026-11-16", until="2026-11-23",
                         out=str(tmp_path / "out"), rules=str(tmp_path / "rules.yaml"),
                         readers=str(tmp_path / "readers.yaml"))
    services = build_services(options, settings, default_media())
    try:
        assert not services.state.opened  # nothing is opened while the run is being built
        assert len(EditionPipeline(services).collect().prs) == 3
        store = services.store()
        assert store.fetchone("SELECT COUNT(*) FROM github_pulls")[0] == 3  # the GitHub cache wrote through it
        drafter = make_drafter(options, settings, None, services.state)
        assert drafter.cache._conn is store  # type: ignore[attr-defined]
        assert services.ledger().conn is store
        drafter.close()
        assert services.store() is store and store.fetchone("SELECT 1")  # neither closed the run's store
    finally:
        services.close()
        server.stop()
    assert not services.state.opened


def test_the_lazy_store_opens_once_from_any_thread_and_closes_once(tmp_path: Path) -> None:
    with state_store(tmp_path / "state.sqlite") as lazy:
        assert isinstance(lazy, LazyStore) and not lazy.opened and not (tmp_path / "state.sqlite").exists()
        got: list[object] = []
        threads = [threading.Thread(target=lambda: got.append(lazy())) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len({id(s) for s in got}) == 1 and lazy.opened
        lazy().execute("CREATE TABLE t (x INTEGER)")
    assert not lazy.opened
    lazy.close()  # twice is fine


# ---- from another package: entry points, loaded by name -----------------------------------------------------
def _installed(folder: Path, monkeypatch, group: str, name: str, module: str, code: str) -> Path:
    """An installed distribution (a dist-info folder on sys.path) declaring ``name`` in ``group``; importing its
    module leaves a mark, so a test sees whether it was loaded at all."""
    import importlib

    folder.mkdir(exist_ok=True)
    mark = folder / f"{module}.imported"
    (folder / f"{module}.py").write_text(f"from pathlib import Path\nPath({str(mark)!r}).write_text('x')\n{code}",
                                         encoding="utf-8")
    install_distribution(folder, module, {group: {name: f"{module}:KIND"}})
    monkeypatch.syspath_prepend(str(folder))
    importlib.invalidate_caches()
    return mark


def test_a_source_and_a_drafter_from_an_installed_package_run_an_edition_and_load_only_when_named(
        tmp_path: Path, monkeypatch) -> None:
    import sys

    source_mark = _installed(tmp_path / "s", monkeypatch, "pr_digest.sources", "weekfile", "weekfile_source",
                             "from prdigest.collect.registry import SourceKind\n"
                             "from prdigest.collect.sources import JsonlSource, sample_week_path\n"
                             "KIND = SourceKind('weekfile', 'the sample week, from a plugin',\n"
                             "                  build=lambda argument, context: JsonlSource(sample_week_path(), None))\n")
    drafter_mark = _installed(tmp_path / "d", monkeypatch, "pr_digest.drafters", "loud", "loud_drafter",
                              "from prdigest.draft.registry import DrafterKind\n"
                              "from tests.test_registries import ShoutyDrafter\n"
                              "KIND = DrafterKind('loud', 'capitals', build=lambda c: ShoutyDrafter(c.vocabulary),\n"
                              "                   label=lambda settings: 'shouty:v1')\n")
    for module in ("weekfile_source", "loud_drafter"):
        monkeypatch.delitem(sys.modules, module, raising=False)
    options = RunOptions(source="sample", drafter="offline", out=str(tmp_path / "o1"))
    assert "weekfile" in SOURCES.names() and "loud" in DRAFTERS.names()  # listed from metadata alone
    assert not source_mark.exists() and not drafter_mark.exists()  # a run that names neither imports neither

    options = RunOptions(source="weekfile", drafter="loud", out=str(tmp_path / "out"), language="en",
                         state=str(tmp_path / "state.sqlite"))
    assert source_mark.exists() and drafter_mark.exists()
    _run(options)
    digest = json.loads((tmp_path / "out" / "digest.json").read_text(encoding="utf-8"))
    assert digest["drafter"] == "shouty:v1" and len(digest["entries"]) == len(read_jsonl(sample_week_path()))
    with pytest.raises(ValueError, match="already registered"):
        SOURCES.register(SourceKind("weekfile", "again", build=lambda argument, context: None))  # type: ignore[arg-type,return-value]
    for module in ("weekfile_source", "loud_drafter"):
        monkeypatch.delitem(sys.modules, module, raising=False)


def test_a_plugin_that_does_not_load_is_named_in_one_line(tmp_path: Path, monkeypatch) -> None:
    _installed(tmp_path, monkeypatch, "pr_digest.sources", "broken", "broken_source", "raise ImportError('no lib')\n")
    with pytest.raises(ValidationError, match=r"--source 'broken': its entry point broken_source:KIND "
                                              r"\(pr_digest.sources\) does not load: ImportError: no lib"):
        RunOptions(source="broken")


def test_the_options_check_imports_neither_collect_nor_draft_with_the_kernel() -> None:
    import subprocess
    import sys

    code = ("import sys; from prdigest.kernel.options import RunOptions; "
            "bad = [m for m in sys.modules if m.startswith(('prdigest.collect', 'prdigest.draft'))]; "
            "assert not bad, bad; RunOptions(source='jsonl:x.jsonl', drafter='openai'); "
            "assert 'prdigest.collect.github' not in sys.modules and 'openai' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).resolve().parents[1])
