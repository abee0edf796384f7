"""Run the classifier and one drafter over labelled PRs, timing each draft and counting what it cost.

The LLM drafter keeps using the pipeline's draft cache in the state store, so evaluating the same
configuration again costs nothing (``no_cache`` drafts afresh and refreshes the cache). What a cached
draft cost when it was made (seconds, tokens) is kept in this module's own table, so a re-run reports
the same per-entry figures as the first run, and separately that it spent nothing.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from functools import partial
from pathlib import Path

from prdigest.classify.subsystems import Classifier, RulesClassifier, classifier_for, rules_for_repo
from prdigest.collect.facts.step import attach_facts
from prdigest.collect.facts.surface import surface_for
from prdigest.collect.git.upstream import Upstream
from prdigest.collect.sources import repo_of
from prdigest.draft import Drafter, ModelDrafter, calibrations
from prdigest.draft.cache import DraftCache
from prdigest.draft.calibration import Calibration, calibrated
from prdigest.draft.packing import DraftContext
from prdigest.draft.registry import DRAFTERS, DrafterKind, DraftingContext
from prdigest.evaluation.gold import GoldSet, LabelledPR, check_vocabulary, load_gold
from prdigest.evaluation.results import EvalConfig, EvalRow, EvalRun, RunInfo
from prdigest.evaluation.shipped import shipped_rows
from prdigest.kernel import storage
from prdigest.kernel.config import Settings
from prdigest.kernel.models import DraftEntry, Language
from prdigest.kernel.window import Window
from prdigest.pipeline.compose import command
from prdigest.pipeline.prepare import draft_contexts
from prdigest.state.store import LazyStore, Store, migrate

MIGRATIONS = [
    """CREATE TABLE eval_drafts (
         key TEXT PRIMARY KEY,
         seconds REAL NOT NULL,
         tokens_in INTEGER NOT NULL,
         tokens_out INTEGER NOT NULL,
         created_at TEXT NOT NULL
       )""",
]

Progress = Callable[[int, int], None]


class RecordingCache(DraftCache):
    """The draft cache, noting which keys were hits; ``fresh`` makes every lookup a miss (``--no-cache``)."""

    def __init__(self, conn: storage.Store, *, fresh: bool = False) -> None:
        super().__init__(conn)
        self.fresh = fresh
        #: Keys found, with the tokens the stored draft cost when it was made.
        self.hits: dict[str, tuple[int, int]] = {}
        self._hits_lock = threading.Lock()

    def get(self, key: str) -> DraftEntry | None:
        """The stored draft (None when fresh drafts are asked for), remembering the hit."""
        found = None if self.fresh else super().get(key)
        if found is not None:
            with self._hits_lock:
                self.hits[key] = (found.tokens_in, found.tokens_out)
        return found


class DraftCosts:
    """Seconds and tokens each LLM draft cost when it was made, by draft-cache key (table ``eval_drafts``)."""

    def __init__(self, conn: Store) -> None:
        migrate(conn, "evaluation", MIGRATIONS)
        self._conn = conn
        self._lock = threading.Lock()

    def get(self, key: str) -> tuple[float, int, int] | None:
        """(seconds, tokens in, tokens out) of the draft under ``key``, or None when not recorded."""
        with self._lock:
            row = self._conn.execute("SELECT seconds, tokens_in, tokens_out FROM eval_drafts WHERE key = ?",
                                     (key,)).fetchone()
        return (float(row[0]), int(row[1]), int(row[2])) if row else None

    def put(self, key: str, seconds: float, tokens_in: int, tokens_out: int) -> None:
        """Record what the draft under ``key`` cost."""
        with self._lock:
            self._conn.execute(
                "INSERT INTO eval_drafts(key, seconds, tokens_in, tokens_out, created_at) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT(key) DO UPDATE SET seconds = excluded.seconds, tokens_in = excluded.tokens_in, "
                "tokens_out = excluded.tokens_out, created_at = excluded.created_at",
                (key, seconds, tokens_in, tokens_out, datetime.now(timezone.utc).isoformat()))


@dataclass
class Candidate:
    """The drafter under evaluation, with its cache and cost book (None for a drafter with no model)."""

    drafter: Drafter
    model: str | None = None
    prompt_version: str | None = None
    base_url: str | None = None
    concurrency: int = 1
    cache: RecordingCache | None = None
    costs: DraftCosts | None = None
    key: Callable[..., str] | None = None
    price: Callable[[int, int], float] = lambda tokens_in, tokens_out: 0.0


@contextmanager
def candidate(config: EvalConfig, settings: Settings, classifier: Classifier, store: LazyStore) -> Iterator[Candidate]:
    """The configured drafter, built by the drafter registry as an edition builds it (the repo's vocabulary,
    the state store's draft cache, recording its hits here), checked before any drafting, closed afterwards."""
    kind = DRAFTERS[config.drafter]
    caches: list[RecordingCache] = []

    def recording(store: storage.Store) -> RecordingCache:  # the same table and keys as the pipeline's
        caches.append(RecordingCache(store, fresh=config.no_cache))
        return caches[-1]

    price = partial(_price, kind, settings)
    drafter = kind.build(DraftingContext(settings, classifier.vocabulary, store, cache=recording))
    try:
        drafter.check()
        if isinstance(drafter, ModelDrafter) and caches:
            yield Candidate(drafter, model=drafter.model, prompt_version=drafter.prompt_version,
                            base_url=drafter.endpoint, concurrency=kind.concurrency(settings),
                            cache=caches[0], costs=DraftCosts(store()), key=drafter.key, price=price)
        else:
            yield Candidate(drafter, concurrency=kind.concurrency(settings), price=price)
    finally:
        drafter.close()


def _price(kind: DrafterKind, settings: Settings, tokens_in: int, tokens_out: int) -> float:
    return kind.cost(tokens_in, tokens_out, settings)


def _row(item: LabelledPR, subsystems: list[str], draft: DraftEntry, seconds: float | None, cached: bool,
         made: tuple[int, int], price: Callable[[int, int], float]) -> EvalRow:
    return EvalRow(
        number=item.pr.number, url=item.pr.url, title=item.pr.title, gold_verdict=item.gold.verdict,
        gold_subsystems=item.gold.subsystems, gold_why=item.gold.why, verdict=draft.verdict,
        subsystems=subsystems, headline=draft.headline, rationale=draft.rationale, focus=draft.focus,
        followups=draft.followups, audience=draft.audience, drafter=draft.drafter, grounding=draft.grounding,
        warnings=draft.warnings, needs_editing=draft.needs_editing, cached=cached, seconds=seconds,
        tokens_in=made[0], tokens_out=made[1], spent_in=draft.tokens_in, spent_out=draft.tokens_out,
        cost_usd=price(*made),
    )


def draft_rows(gold: GoldSet, subsystems: list[list[str]], cand: Candidate, language: Language,
               progress: Progress | None = None, contexts: Mapping[int, DraftContext] | None = None,
               calibration: Calibration | None = None) -> list[EvalRow]:
    """Draft every labelled PR (``cand.concurrency`` at a time), in file order, with its cost, each given its
    context as a run gives it (``contexts``: PR number → relations, the clone's hunks and texts) and its verdict
    calibrated as a run's is (the drafter's own kept in ``uncalibrated_verdict``)."""
    contexts = contexts or {}
    done = 0
    lock = threading.Lock()

    def one(i: int) -> EvalRow:
        nonlocal done
        item = gold.items[i]
        started = time.perf_counter()
        context = contexts.get(item.pr.number)
        draft = cand.drafter.draft(item.pr, subsystems[i], language, context)
        seconds: float | None = time.perf_counter() - started
        made = (draft.tokens_in, draft.tokens_out)
        cached = False
        if cand.key is not None and cand.cache is not None and cand.costs is not None:
            key = cand.key(item.pr, subsystems[i], language, context)
            cached = key in cand.cache.hits
            if cached:  # an edition's draft has its tokens but no timing; one made by digest eval has both
                seconds, tokens_in, tokens_out = cand.costs.get(key) or (None, *cand.cache.hits[key])
                made = (tokens_in, tokens_out)
            elif draft.drafter == cand.drafter.name:  # a fresh model draft (not a fallback), now in the draft cache
                cand.costs.put(key, seconds or 0.0, *made)
        final = calibrated(draft, item.pr, subsystems[i], language, calibration)
        row = _row(item, subsystems[i], final, seconds, cached, made, cand.price)
        if calibration is not None:
            row = row.model_copy(update={"uncalibrated_verdict": draft.verdict})
        with lock:
            done += 1
            if progress:
                progress(done, len(gold.items))
        return row

    indices = range(len(gold.items))
    if cand.concurrency <= 1:
        return [one(i) for i in indices]
    with ThreadPoolExecutor(max_workers=cand.concurrency, thread_name_prefix="eval") as pool:
        return list(pool.map(one, indices))


def run_eval(config: EvalConfig, settings: Settings, progress: Progress | None = None) -> EvalRun:
    """Classify and draft every labelled PR of ``config.gold`` with the configured drafter."""
    gold = load_gold(Path(config.gold).expanduser())
    repo = config.repo or repo_of([i.pr for i in gold.items], gold.path)
    classifier = classifier_for(repo, Path(config.rules) if config.rules else None)
    if classifier.known_subsystems:  # the folder fallback knows its names only after classifying
        check_vocabulary(gold, classifier.known_subsystems)
    language: Language = config.language or settings.language
    started = datetime.now(timezone.utc)
    with command(settings) as core:  # one store for the draft cache, the facts and the connect step
        store = core.store
        # The run's steps before drafting: the code facts (from --git, else the patches), then each PR's context.
        gold, contexts = prepared(gold, repo, settings, classifier, store())
        subsystems = [classifier.classify(item.pr) for item in gold.items]
        calibration = None if config.no_calibration else calibrations.latest(store(), repo)
        with candidate(config, settings, classifier, store) as cand:
            rows = draft_rows(gold, subsystems, cand, language, progress, contexts, calibration)
            info = RunInfo(drafter=DRAFTERS[config.drafter].title(settings),
                           model=cand.model, prompt_version=cand.prompt_version, llm_base_url=cand.base_url,
                           language=language, repo=repo, rules=config.rules, gold=str(gold.path),
                           gold_sha256=gold.sha256, started_at=started, no_cache=config.no_cache,
                           rules_sha256=_sha256(Path(config.rules) if config.rules else rules_for_repo(repo)),
                           calibration=_described(calibration))
        # Scored as it ships: after the connect step (relations, reverted PRs demoted), the drafter's verdict kept.
        shipped = shipped_rows(rows, gold, repo, language, store(), classifier.vocabulary)
        if calibration is not None:  # and what would have shipped without the calibration, through the same step
            plain = shipped_rows([r.model_copy(update={"verdict": r.uncalibrated_verdict}) for r in rows], gold, repo,
                                 language, store(), classifier.vocabulary)
            shipped = [r.model_copy(update={"uncalibrated_verdict": p.verdict}) for r, p in zip(shipped, plain)]
        rows = shipped
    return EvalRun(info=info, rows=rows)


def prepared(gold: GoldSet, repo: str, settings: Settings, classifier: Classifier, store: Store
             ) -> tuple[GoldSet, dict[int, DraftContext]]:
    """The labelled PRs as a run drafts them: with their code facts (the ``--git`` clone's, cached by merge commit,
    else the REST patches') and each one's draft context (relations, the clone's hunks and texts), the labelled
    PRs taken as one edition over the window their merges span."""
    upstream = Upstream(settings.git, settings.clone_home())
    clone = upstream()
    if upstream.problem:  # said once when it was opened; the facts come from the patches
        settings = settings.model_copy(update={"git": None})
    rules = classifier.rules if isinstance(classifier, RulesClassifier) else None
    prs, _ = attach_facts([i.pr for i in gold.items], settings=settings,
                          surface=surface_for(rules.code if rules else None),
                          store=store if clone is not None else None, clone=clone)
    gold = replace(gold, items=[replace(item, pr=pr) for item, pr in zip(gold.items, prs)])
    since = min(pr.merged_at for pr in prs)
    window = Window(since, max(pr.merged_at for pr in prs) + timedelta(microseconds=1))
    return gold, draft_contexts(repo, window, prs, store, clone)


def _described(calibration: Calibration | None) -> str | None:
    if calibration is None:
        return None
    return f"fitted {calibration.created_at[:16]} on {calibration.labels} labels ({calibration.source})"


def _sha256(path: Path | None) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path is not None and path.is_file() else None
