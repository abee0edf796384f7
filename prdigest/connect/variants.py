"""Variants: the set of entries one reader filter selects; readers with the same filter share one."""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, cast

from prdigest.connect.lede import LedeBasis, variant_lede, write_lede
from prdigest.connect.plans import Plans
from prdigest.kernel.i18n import catalog, messages
from prdigest.kernel.models import EarlierFollowup, Edition, Entry, EntryStatus, FilterRecord, VariantRecord, Verdict
from prdigest.kernel.vocabulary import Vocabulary
from prdigest.readers.file import DEFAULT_BUDGET, Reader
from prdigest.state.compact import compact
from prdigest.state.fields_set import one_fields_set

if TYPE_CHECKING:
    from prdigest.connect.lede import Complete


#: Joins subsystem names in a variant key; names are ``[a-z0-9][a-z0-9-]*``, so it never occurs in one.
KEY_JOIN = "+"
KEY_MAX = 60


@dataclass(frozen=True)
class Filter:
    """A reader's selection rule: followed subsystems (empty = all), exclusions, lowest verdict, and the
    read-first budget (a variant is one filter and one budget)."""

    subsystems: frozenset[str] = frozenset()
    exclude: frozenset[str] = frozenset()
    min_verdict: Verdict = Verdict.SKIP
    budget: int = DEFAULT_BUDGET
    #: The readers' own repository (the readers file's ``downstreams``): entries that affect it are selected
    #: whatever their subsystem or verdict, and shown first.
    downstream: str | None = None
    #: How the subsystems are shown in :meth:`describe`; not part of the filter's identity.
    vocabulary: Vocabulary = field(default_factory=Vocabulary.open, compare=False, repr=False)

    @classmethod
    def of(cls, reader: Reader, vocabulary: Vocabulary | None = None) -> "Filter":
        return cls(frozenset(reader.subsystems), frozenset(reader.exclude), reader.min_verdict, reader.budget,
                   reader.downstream, vocabulary or Vocabulary.open())

    def selects(self, entry: Entry) -> bool:
        """An entry reaches a reader when one subsystem is followed, its primary one (the first) is not
        excluded, and its verdict is high enough.

        Only the primary subsystem counts for ``exclude``: a reader of attention who excludes ci-build still
        wants the attention PR that also touched a CI file, and never the PR that is about CI. An entry that
        affects the reader's downstream is always selected.
        """
        if self.downstream is not None and any(i.downstream == self.downstream for i in entry.impact):
            return True
        return self._selects(entry.subsystems, entry.verdict)

    def select(self, facts: "list[_Facts]") -> list[Entry]:
        """The entries this filter :meth:`selects`, in their order, from :func:`selection_facts` of them: the
        same test, with each entry's fields read once for every filter of a plan instead of once per filter."""
        follow, exclude, lowest, downstream = self.subsystems, self.exclude, self.min_verdict.rank, self.downstream
        return [entry for entry, subsystems, primary, rank, downstreams in facts
                if (downstream is not None and downstream in downstreams)
                or ((not follow or not follow.isdisjoint(subsystems)) and primary not in exclude and rank >= lowest)]

    def _selects(self, subsystems: Sequence[str], verdict: Verdict) -> bool:
        if self.subsystems and not set(subsystems) & self.subsystems:
            return False
        if subsystems and subsystems[0] in self.exclude:
            return False
        return verdict.rank >= self.min_verdict.rank

    def shows_followup(self, item: EarlierFollowup, numbers: Collection[int] = ()) -> bool:
        """Whether this variant lists an earlier follow-up: the entry that suggested it is one this filter
        selects (by its subsystems and verdict as published), or it was done by one of the variant's entries
        (``numbers``). An item whose origin is unknown goes only to readers of everything."""
        if item.status == "done" and item.by_number is not None and item.by_number in numbers:
            return True
        if not item.subsystems and item.verdict is None:
            return not self.subsystems and not self.exclude and self.min_verdict is Verdict.SKIP
        return self._selects(item.subsystems, item.verdict or Verdict.SKIP)

    @property
    def key(self) -> str:
        """A short, stable, file-name-safe name for this filter, readable where possible, never shared.

        ``+`` joins names (it cannot occur in one, so ``docs-site`` and ``docs+site`` differ), ``_`` joins
        the parts (followed, ``no-…``, ``min-…``, ``first-N`` for a budget other than the default, ``on-NAME``
        for a downstream). A key over 60 characters, or one following a subsystem literally named ``all``,
        keeps a readable prefix and ends in ``_`` + 10 hex digits of the full key: no readable key ends that
        way (its later parts start with ``no-``, ``min-``, ``first-`` or ``on-``).
        """
        follow = KEY_JOIN.join(sorted(self.subsystems)) or "all"
        parts = [follow]
        if self.exclude:
            parts.append("no-" + KEY_JOIN.join(sorted(self.exclude)))
        if self.min_verdict is not Verdict.SKIP:
            parts.append(f"min-{self.min_verdict.value}")
        if self.budget != DEFAULT_BUDGET:
            parts.append(f"first-{self.budget}")
        if self.downstream is not None:
            parts.append(f"on-{self.downstream}")
        name = "_".join(parts)
        if len(name) > KEY_MAX or (self.subsystems and follow == "all"):
            digest = hashlib.sha1(name.encode()).hexdigest()[:10]
            name = f"{follow[:40]}_{digest}"
        return name

    def describe(self, language: str) -> str:
        """One line for the top of a message saying what this variant contains."""
        lang = catalog(language).whole("variant", "verdict").language  # one line, one language
        words = messages(lang, "variant")
        follow = self._shown(self.subsystems, lang) or words["all"]
        text = words["following"].format(follow=follow)
        if self.exclude:
            text += words["excluding"].format(excluded=self._shown(self.exclude, lang))
        if self.min_verdict is not Verdict.SKIP:
            text += words["at_least"].format(verdict=self.min_verdict.label(lang))
        return text

    def _shown(self, names: frozenset[str], language: str) -> str:
        vocab = self.vocabulary
        return ", ".join(vocab.shown(sorted(names, key=vocab.sort_key), language))


@dataclass
class Variant:
    """One rendering target: a filter, the entries it selects, and the readers who share it."""

    filter: Filter
    entries: list[Entry]
    readers: list[Reader] = field(default_factory=list)
    #: The entries to read before anything else, best first (at most the filter's budget).
    read_first: list[Entry] = field(default_factory=list)
    #: Two to four sentences about this variant's entries (prdigest/connect/lede.py).
    lede: str = ""

    @property
    def key(self) -> str:
        return self.filter.key

    @property
    def vocabulary(self) -> Vocabulary:
        """The repo's vocabulary, for the renderers' subsystem labels."""
        return self.filter.vocabulary

    def record(self) -> VariantRecord:
        """The variant as the edition record and ``digest.json`` keep it."""
        flt = self.filter
        # each record with its class's one set of fields set (every field given) and its values in a dictionary
        # sharing its keys with the other records': held to the run's end per variant
        kept = compact(one_fields_set(FilterRecord(
            subsystems=sorted(flt.subsystems), exclude=sorted(flt.exclude), min_verdict=flt.min_verdict,
            budget=flt.budget, downstream=flt.downstream)))
        return compact(one_fields_set(VariantRecord(key=self.key, readers=[r.id for r in self.readers],
                                                    numbers=[e.number for e in self.entries],
                                                    read_first=[e.number for e in self.read_first], lede=self.lede,
                                                    filter=kept)))


def ordered(entries: list[Entry], vocabulary: Vocabulary | None = None) -> list[Entry]:
    """Reading order for every medium: deep-read first, then by first subsystem, then by PR number."""
    vocab = vocabulary or Vocabulary.open()
    fallback = vocab.fallback.name
    return sorted(entries, key=lambda e: (-e.verdict.rank, vocab.sort_key((e.subsystems or [fallback])[0]),
                                          e.number))


#: What :meth:`Filter.select` reads of an entry: the entry, its subsystems, its primary one (None without any),
#: its verdict's rank and the downstreams it affects.
_Facts = tuple[Entry, frozenset[str], "str | None", int, frozenset[str]]


def selection_facts(entries: Sequence[Entry]) -> list[_Facts]:
    """Each entry's fields :meth:`Filter.select` reads, read once."""
    return [(e, frozenset(e.subsystems), e.subsystems[0] if e.subsystems else None, e.verdict.rank,
             frozenset(i.downstream for i in e.impact)) for e in entries]


def plan_variants(edition: Edition, readers: list[Reader], vocabulary: Vocabulary | None = None, *,
                  drafts: bool = False, plans: Plans | None = None) -> tuple[list[Variant], list[Reader]]:
    """Group readers by filter over the edition's published entries (``vocabulary``: the repo's; ``drafts``:
    over every entry not rejected, as the connect step does before review).

    Returns the variants that select at least one entry, and the readers who get nothing
    (their filter selects no published entry: they receive no message at all). Each variant's read-first
    comes from the edition's ranking and its lede from the edition's record of that variant while that
    lede is still grounded in the variant's entries (else the offline lede of the variant).

    ``plans``: the run's :class:`~prdigest.connect.plans.Plans`: a plan over drafts is kept in it, and a plan over
    the approved entries reuses its grouping and selections (the same variants, selected again only where the
    review changed an entry they hold or now select).
    """
    published = [e for e in edition.entries if e.status is not EntryStatus.REJECTED] if drafts else edition.published
    # In reading order once: each filter's selection keeps it (ordered() of the selection, without a sort each).
    facts = selection_facts(ordered(published, vocabulary))
    kept = plans.groups(readers, vocabulary, facts) if plans is not None and not drafts else None
    if kept is not None:
        every = [Variant(cast(Filter, flt), entries, group) for flt, entries, group in kept]
    else:
        by_filter: dict[Filter, Variant] = {}
        sets: dict[frozenset[str], frozenset[str]] = {}  # equal sets of names held once by the filters kept
        # One vocabulary for every filter: the renderers make an entry's view once per vocabulary object, so a fresh
        # open vocabulary per filter made every variant render its entries anew (memory growing with readers).
        vocab = vocabulary or Vocabulary.open()
        for reader in readers:
            flt = Filter.of(reader, vocab)
            if flt not in by_filter:
                flt = replace(flt, subsystems=sets.setdefault(flt.subsystems, flt.subsystems),
                              exclude=sets.setdefault(flt.exclude, flt.exclude))
                by_filter[flt] = Variant(flt, flt.select(facts))
            by_filter[flt].readers.append(reader)
        every = list(by_filter.values())
        if plans is not None and drafts:
            plans.keep(readers, vocabulary, facts, [(v.filter, v.entries, v.readers) for v in every])
    served = [v for v in every if v.entries]
    idle = [r for v in every if not v.entries for r in v.readers]
    _dedupe_keys(served)

    drafted = {v.key: v.lede for v in edition.variants}
    basis = LedeBasis.of(edition, published)
    # equal ledes held once (variants that differ by budget or by what selects nothing write the same): kept by
    # the variants and their records to the run's end, ~400 bytes each
    ledes: dict[str, str] = {}
    for variant in served:
        variant.read_first = pick_read_first(edition.ranking, variant.entries, variant.filter.budget)
        lede = variant_lede(edition, variant.entries, variant.read_first, vocabulary,
                            drafted=drafted.get(variant.key, ""), everything=published, basis=basis)
        variant.lede = ledes.setdefault(lede, lede)
    return served, idle


def kept_variants(edition: Edition, readers: list[Reader], vocabulary: Vocabulary | None = None) -> list[Variant]:
    """The variants as the edition's record kept them when they were sent (their filter, entries, read-first and
    lede), for the ``readers`` still served: ``digest resend`` sends what was first sent, never a re-plan over
    the readers' later choices. An edition recorded before filters were kept is planned again."""
    if not edition.variants or any(v.filter is None for v in edition.variants):
        return plan_variants(edition, readers, vocabulary)[0]
    by_id = {r.id: r for r in readers}
    entries = {e.number: e for e in edition.published}
    vocab = vocabulary or Vocabulary.open()
    kept: list[Variant] = []
    for record in edition.variants:
        assert record.filter is not None
        f = record.filter
        flt = Filter(frozenset(f.subsystems), frozenset(f.exclude), f.min_verdict, f.budget, f.downstream, vocab)
        chosen = [entries[n] for n in record.numbers if n in entries]
        served = [by_id[r] for r in record.readers if r in by_id]
        if chosen and served:
            kept.append(Variant(flt, chosen, served, [entries[n] for n in record.read_first if n in entries],
                                record.lede))
    return kept


def pick_read_first(ranking: list[int], entries: list[Entry], budget: int) -> list[Entry]:
    """The variant's read-first: its entries in the edition's ranking order, at most ``budget``."""
    mine = {e.number: e for e in entries}
    return [mine[n] for n in ranking if n in mine][:budget]


def _dedupe_keys(variants: list[Variant]) -> None:
    """Keys are injective but for a collision of 40 bits of SHA-1: fail loudly rather than mix readers."""
    keys = [v.key for v in variants]
    if len(keys) != len(set(keys)):  # pragma: no cover - needs a sha1 prefix collision
        raise AssertionError(f"variant keys collide: {keys}")


def draft_variants(edition: Edition, readers: list[Reader], vocabulary: Vocabulary | None = None,
                   complete: "Complete | None" = None, plans: Plans | None = None) -> list[VariantRecord]:
    """The connect step's variants, before review: over every entry not rejected, each with its read-first
    and its own lede (the model's when ``complete`` is given and its answer cites only the variant's
    entries; a variant holding every entry shares the edition's lede). ``plans``: kept there for the render step."""
    variants, _ = plan_variants(edition, readers, vocabulary, drafts=True, plans=plans)
    live = {e.number for e in edition.entries if e.status is not EntryStatus.REJECTED}
    for variant in variants:
        if complete is not None and {e.number for e in variant.entries} != live:
            variant.lede = write_lede(edition, complete, vocabulary, variant.entries, variant.read_first)
    return [v.record() for v in variants]
