"""Domain types that cross every boundary of the pipeline: PRs in, entries and editions out."""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Annotated, Any, Generic, Literal, Self, TypeVar, overload

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from prdigest.kernel.i18n import DEFAULT, catalog, known_language, messages
from prdigest.kernel.surrogates import scrub_data
from prdigest.kernel.text import slug

T = TypeVar("T")

#: A language tag a catalog exists for (prdigest/kernel/i18n.py: the shipped ones, a plugin's, DIGEST_CATALOGS'),
#: checked where a language enters (settings, run options); a stored edition keeps whatever it was made in.
Language = Annotated[str, AfterValidator(known_language)]

#: vLLM's subsystem vocabulary; rules files may only name these (plus generic top-level folders).
SUBSYSTEMS: tuple[str, ...] = (
    "kernels", "moe", "attention", "spec-decode", "distributed", "kv-cache", "scheduler-core", "rocm",
    "tpu", "cpu-xpu", "models", "multimodal", "frontend-api", "tool-calling", "structured-output",
    "quantization", "ci-build", "deps", "docs", "security", "perf-benchmarks", "lora", "sampling", "other",
)


def utc(dt: datetime) -> datetime:
    """Return ``dt`` as an aware UTC datetime; naive values are taken to be UTC already."""
    return dt.replace(tzinfo=timezone.utc) if dt.tzinfo is None else dt.astimezone(timezone.utc)


class Verdict(str, enum.Enum):
    """How much of a reader's attention an entry deserves, from most to least."""

    DEEP_READ = "deep-read"
    SKIM = "skim"
    SKIP = "skip"

    @property
    def rank(self) -> int:
        """2 for deep-read, 1 for skim, 0 for skip: ``a.rank >= b.rank`` means "at least as important"."""
        return {"deep-read": 2, "skim": 1, "skip": 0}[self.value]

    def label(self, language: str) -> str:
        """The verdict as readers see it in ``language`` (its catalog's ``verdict.*``: 值得精读, Deep read…)."""
        return str(catalog(language)[f"verdict.{self.value}"])


class EntryStatus(str, enum.Enum):
    """Where an entry stands in review."""

    DRAFT = "draft"
    APPROVED = "approved"
    EDITED = "edited"
    REJECTED = "rejected"


#: GitHub's own limit on a PR description or a comment. Every source's text is cut to it when the record is
#: built (JSONL and GitHub alike): a 50 MB description in a JSONL file cost 15 s and 350 MB downstream.
MAX_BODY = 65_536


def _whole(cls: type[Any], value: object) -> object:
    """A field's input with every lone surrogate made U+FFFD (a ``\\ud800`` escape in a JSONL line, GitHub's JSON
    or a model's answer): one PR's text can then never stop a run where it is written, hashed or sent."""
    return scrub_data(value)


def _capped(value: object) -> object:
    if value is None:
        return ""
    return value[:MAX_BODY] if isinstance(value, str) else value


class _Record(BaseModel):
    """Records read from sources: unknown keys (e.g. the fixture's ``gold``) are ignored."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    _whole = field_validator("*", mode="before")(classmethod(_whole))


class FileChange(_Record):
    """One file a PR touched."""

    path: str = Field(min_length=1)
    additions: int = Field(default=0, ge=0)
    deletions: int = Field(default=0, ge=0)
    status: str = "modified"
    previous_path: str | None = None
    #: Unified-diff hunk text for the most changed files, within a size budget (GitHub source only).
    patch: str | None = None

    @property
    def changes(self) -> int:
        return self.additions + self.deletions


class ReviewComment(_Record):
    """A reviewer's (or the author's) remark on the PR, inline or in the conversation."""

    author: str = "ghost"
    body: str = ""
    path: str | None = None

    @field_validator("author", mode="before")
    @classmethod
    def _ghost(cls, value: object) -> object:
        return value or "ghost"

    @field_validator("body", mode="before")
    @classmethod
    def _cap(cls, value: object) -> object:
        return _capped(value)


ChangeKind = Literal["added", "removed", "renamed", "moved", "signature", "env", "argument", "config", "dependency",
                     "kernel", "file-deleted", "file-renamed", "tests", "abstract", "bases", "body", "ci", "build",
                     "attribute", "returns", "passes", "deprecated", "registry", "retyped"]


#: Appended by the facts engine to a signature fact's detail when an upstream call site passes a parameter the
#: fact adds with a default (``+eps=1e-6 (upstream passes eps)``): for the downstream match, not for prose.
UPSTREAM_PASSES = " (upstream passes "


def plain_detail(detail: str) -> str:
    """A fact's detail without the facts engine's note of who passes a new parameter (what prose shows)."""
    return detail.split(UPSTREAM_PASSES, 1)[0]


def opt_in_signature(detail: str) -> bool:
    """Whether a signature detail (``+eps=1e-6, scale=required→None``) only adds parameters with a default or
    gives required ones a default: every call written before still works and means the same."""
    parts = [p.strip() for p in plain_detail(detail).split(",") if p.strip()]
    return bool(parts) and all((p.startswith("+") and "=" in p) or "=required→" in p or p.startswith("+*")
                               or (p.startswith("-") and "→**" in p) for p in parts)


class Change(BaseModel):
    """One code fact: something a PR's diff did to the code, read from a file before and after (never prose).

    ``symbol`` is the dotted name within its module (``FusedMoE``, ``Scheduler.schedule``, ``VLLM_USE_V1``,
    ``torch`` for a pin); ``path`` the file after the change (before it, for a removal); ``line`` the 1-based
    line in that version; ``before``/``after`` the compact old and new shape (a signature, a bound, a name,
    a module path), empty when there is none. ``detail`` says what changed in a signature (``+layer_names``,
    ``-dtype``, ``block_size=16→32``); ``public`` is False for names starting with ``_``. ``reach`` says who can
    see the change (``public``: what the repo exports, documents or requires; ``internal``: what only the repo
    itself uses) and ``reach_how`` how that was decided (prdigest/collect/facts/reach.py).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    _whole = field_validator("*", mode="before")(classmethod(_whole))

    kind: ChangeKind
    symbol: str
    path: str
    line: int = 0
    before: str = ""
    after: str = ""
    detail: str = ""
    public: bool = True
    language: Literal["python", "cpp", "cuda", "triton", "pallas", "config", "text"] = "python"
    reach: Literal["public", "internal"] = "public"
    reach_how: str = ""
    #: Of the parameters a signature fact adds with a default, those an upstream call site passes (the prose
    #: after ``detail``'s `` (upstream passes …)`` is for readers; the match reads these fields).
    passed: tuple[str, ...] = ()
    #: When every call passing them is ``self.m(...)`` inside the fact's class: those methods (``Runner.a``).
    #: Of an attribute its class's ``__init__`` now sets: the class's methods from which upstream reads it on
    #: ``self`` (empty when it reads it on other objects too: pyapi.attribute_reach).
    callers: tuple[str, ...] = ()
    #: ``untyped`` when every such call is on a receiver of unknown type, else empty.
    receiver: Literal["", "untyped"] = ""
    #: Upstream classes (``vllm.b.Child``) that inherit the changed method without defining it: a downstream
    #: reaches it as ``Child.f`` too (prdigest.collect.facts.inheritors).
    inherited_by: tuple[str, ...] = ()
    #: Upstream packages (``vllm.attention``), other than those above the fact's module, whose ``__init__``
    #: re-exports the name: a downstream reaches it through them too (prdigest.collect.facts.reexporters).
    reexported_by: tuple[str, ...] = ()
    #: Of a constructor fact (``C.__init__``, a signature or ``passes`` fact): ``by-name`` when every upstream call
    #: passing its new parameters builds the class by its own name (not a variable, a factory or a class a
    #: ``__new__`` picks): a downstream subclass is built there only where the downstream patches the class over
    #: (prdigest.collect.facts.constructors).
    constructed: Literal["", "by-name"] = ""
    #: Upstream functions (``vllm.utils.torch_utils.set_random_seed``) that need what the fact adds, with no
    #: fallback: they call a method that only raises ``NotImplementedError`` on an instance of its class, or look a
    #: new registry up with ``[key]`` (prdigest.collect.facts.hooks, prdigest.collect.facts.registries); of an
    #: ``added`` method with ``sets``, those calling it on an instance of its class; of a new Triton or Pallas
    #: kernel, the modules whose code the commit makes call it (prdigest.collect.facts.pykernels).
    needed_by: tuple[str, ...] = ()
    #: Of a new registry: the registries of its module that list the same kind of class (a downstream entering one
    #: of them is told to enter the new one too).
    siblings: tuple[str, ...] = ()
    #: Of a new registry: the classes it lists, by their dotted names (a downstream subclass of one is told).
    listed: tuple[str, ...] = ()
    #: Of a ``body`` fact: the upstream functions (``vllm.a.C.f``; ``vllm.a.*.f`` when the class is out of a patch's
    #: sight) whose lines the change moved into this method: what ran for everyone now runs only through it
    #: (prdigest.collect.facts.patchrehomed). Of an ``added`` method with ``sets``: upstream's subclasses' overrides
    #: that set those attributes before (prdigest.collect.facts.newhooks).
    moved_from: tuple[str, ...] = ()
    #: Of an ``added`` method upstream calls on instances of its class (``needed_by``): the attributes it sets on
    #: objects named after their class (``cache_config.block_size``), which a subclass that does not define it now
    #: has set by upstream's default (prdigest.collect.facts.newhooks).
    sets: tuple[str, ...] = ()
    #: Of a method fact: the slots where the upstream takes a class by its qualified name in a string and expects
    #: this method's class there (``worker_cls``): a downstream class registered in the slot that subclasses nothing
    #: of the upstream's implements it all the same (prdigest.collect.facts.registered).
    registered: tuple[str, ...] = ()

    @model_serializer(mode="wrap")
    def _without_empty_calls(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # the call-site fields only where a fact has them: every other fact reads as it always did
        data: dict[str, Any] = handler(self)
        for key in ("passed", "callers", "receiver", "inherited_by", "reexported_by", "constructed", "needed_by",
                    "siblings", "listed", "moved_from", "sets", "registered"):
            if not data.get(key, True):
                data.pop(key, None)
        return data

    @property
    def breaks(self) -> bool:
        """True when the fact breaks callers: it removes, renames, moves or changes the signature of a public
        name (adding only parameters with defaults, or giving a required one a default, does not), removes or
        renames an environment variable, an argument or a config field, removes a kernel, or deletes a module
        whose reach is public. An internal fact never breaks. Such a fact marks its entry ``breaking``."""
        if not self.public or self.reach == "internal":
            return False
        if self.kind == "file-deleted":
            # A module removed is an interface change once its reach was read and found public.
            return self.path.endswith((".py", ".pyi")) and bool(self.reach_how)
        if self.kind == "moved" and self.detail == "re-exported":  # the old import still works
            return False
        if self.kind in ("removed", "renamed", "moved"):
            return True
        if self.kind == "signature":
            return not opt_in_signature(self.detail)
        if self.kind in ("env", "argument", "config"):
            return bool(self.before) and (not self.after or self.detail.startswith("renamed") or self.detail == "moved")
        if self.kind == "kernel":
            return bool(self.before) and not self.after
        return False


ReviewState = Literal["APPROVED", "CHANGES_REQUESTED", "COMMENTED", "DISMISSED"]

#: Characters of a linked issue's description kept (its title and opening say what it is about).
MAX_ISSUE_BODY = 1_000


class Review(_Record):
    """A submitted review: who, its state (approved, changes requested, commented) and its summary."""

    author: str = "ghost"
    state: ReviewState = "COMMENTED"
    body: str = ""

    @field_validator("author", mode="before")
    @classmethod
    def _ghost(cls, value: object) -> object:
        return value or "ghost"

    @field_validator("state", mode="before")
    @classmethod
    def _state(cls, value: object) -> object:
        return str(value or "COMMENTED").upper()

    @field_validator("body", mode="before")
    @classmethod
    def _cap(cls, value: object) -> object:
        return _capped(value)


class LinkedIssue(_Record):
    """An issue the PR closes or names: its title, the opening of its description and its state."""

    number: int = Field(gt=0)
    title: str = ""
    body: str = ""
    state: str = "open"

    @field_validator("title", "state", mode="before")
    @classmethod
    def _text(cls, value: object) -> object:
        return "" if value is None else value

    @field_validator("body", mode="before")
    @classmethod
    def _opening(cls, value: object) -> object:
        return "" if value is None else value[:MAX_ISSUE_BODY] if isinstance(value, str) else value


class PullRequest(_Record):
    """A merged pull request as collected from a source."""

    number: int = Field(gt=0)
    url: str
    title: str = ""
    author: str = "ghost"
    created_at: datetime | None = None
    merged_at: datetime
    updated_at: datetime | None = None
    labels: list[str] = Field(default_factory=list)
    body: str = ""
    files: list[FileChange] = Field(default_factory=list)
    additions: int = Field(default=0, ge=0)
    deletions: int = Field(default=0, ge=0)
    review_comments: list[ReviewComment] = Field(default_factory=list)
    #: Submitted reviews with their state (the discussion: prdigest/collect/discussion/).
    reviews: list[Review] = Field(default_factory=list)
    #: The conversation: comments on the PR itself, not on a line.
    comments: list[ReviewComment] = Field(default_factory=list)
    #: Issues the PR closes or names.
    linked_issues: list[LinkedIssue] = Field(default_factory=list)
    #: True when the source stopped listing files (GitHub lists at most 3,000).
    files_truncated: bool = False
    #: Code facts read from the files before and after (prdigest/collect/facts/), attached before drafting so
    #: the drafter sees them; a JSONL line may carry them too. ``Entry.from_draft`` copies them to the entry.
    changes: list[Change] = Field(default_factory=list)
    #: The sha of the commit the PR landed as (a squash or merge commit: GitHub's ``merge_commit_sha``), read
    #: from the upstream clone with ``--git``; None when the source does not know it.
    merge_commit: str | None = Field(default=None, pattern=r"^[0-9a-fA-F]{7,40}$")
    #: Where ``changes`` came from: ``git`` (the files before and after, from the clone) or ``patches`` (the
    #: REST hunks only: partial); None before the facts step ran.
    facts_source: Literal["git", "patches"] | None = None
    #: Code facts the facts step counted but did not keep (a PR over its cap of facts: a giant commit).
    changes_omitted: int = Field(default=0, ge=0)

    @field_validator("author", mode="before")
    @classmethod
    def _ghost(cls, value: object) -> object:
        # A deleted account has no login: GitHub shows it as "ghost", and so do we.
        return value or "ghost"

    @field_validator("title", mode="before")
    @classmethod
    def _text(cls, value: object) -> object:
        return "" if value is None else value

    @field_validator("body", mode="before")
    @classmethod
    def _cap(cls, value: object) -> object:
        return _capped(value)

    @field_validator("merged_at", "created_at", "updated_at")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        return None if value is None else utc(value)

    @property
    def size(self) -> int:
        return self.additions + self.deletions


RelationKind = Literal["reverts", "reverted-by", "relands", "relanded-by", "follow-up-of", "followed-up-by", "fixes",
                       "ports", "part-of-series"]


class Relation(BaseModel):
    """A link from an entry to another PR of this edition or of an earlier one (prdigest/connect/relations.py).

    ``edition`` is the related PR's edition window (``2026-W46``); ``verdict`` is the verdict it was published
    with (None for a PR of this edition, whose verdict the review may still change).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: RelationKind
    number: int
    edition: str
    verdict: Verdict | None = None


ImpactHow = Literal["imports", "subclasses", "overrides", "patches", "calls"]
ImpactSeverity = Literal["breaks", "check"]


class Impact(BaseModel):
    """An upstream fact matched against one use in a downstream repository (its file and line)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    downstream: str
    path: str
    line: int
    symbol: str
    how: ImpactHow
    severity: ImpactSeverity
    fact: str
    number: int = 0
    partial: bool = False
    #: The day ``digest watch`` alerted this downstream's readers about it (``YYYY-MM-DD``), and the downstream's
    #: own commit that changed the flagged lines since (``fixed in your abc123``).
    alerted: str | None = None
    fixed: str | None = None


class Coverage(BaseModel):
    """What the drafter was given of a PR: files seen, clipped and left out; comments and issues seen."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    files_seen: int = 0
    files_total: int = 0
    files_clipped: int = 0
    lines_seen: int = 0
    lines_total: int = 0
    comments_seen: int = 0
    comments_total: int = 0
    issues: list[int] = Field(default_factory=list)
    source: Literal["git", "patches"] = "patches"

    @property
    def low(self) -> bool:
        """True when the drafter saw less than a third of the changed lines."""
        return self.lines_total > 0 and self.lines_seen * 3 < self.lines_total

    def summary(self, language: str = "en") -> str:
        """``7 of 41 files, 3 clipped; 120 of 900 changed lines; 12 of 20 remarks; issue #31913`` (or in zh-CN)."""
        w = messages(catalog(language).whole("coverage").language, "coverage")  # one line, one language
        parts = [w["files"].format(seen=self.files_seen, total=self.files_total)
                 + (w["clipped"].format(n=self.files_clipped) if self.files_clipped else "")]
        if self.lines_total:
            parts.append(w["lines"].format(seen=self.lines_seen, total=self.lines_total))
        if self.comments_total:
            parts.append(w["comments"].format(seen=self.comments_seen, total=self.comments_total))
        if self.issues:
            parts.append(w["issues"].format(count=len(self.issues), issues=", ".join(f"#{n}" for n in self.issues)))
        if self.source == "git":
            parts.append(w["git"])
        return w["joiner"].join(parts)


class Story(BaseModel):
    """Related entries of one edition shown as one block (prdigest/connect/stories.py)."""

    model_config = ConfigDict(extra="forbid")
    _whole = field_validator("*", mode="before")(classmethod(_whole))

    title: str
    numbers: list[int]


class EarlierFollowup(BaseModel):
    """A follow-up an earlier edition's entry suggested, and whether a PR of this edition did it."""

    model_config = ConfigDict(extra="forbid")
    _whole = field_validator("*", mode="before")(classmethod(_whole))

    from_number: int
    from_edition: str
    text: str
    status: Literal["done", "open"] = "open"
    by_number: int | None = None
    #: A PR the semantic match proposes as doing it: the editor confirms it in the review (never done alone).
    proposed_by: int | None = None
    #: The subsystems and verdict of the entry that suggested it, as published (empty and None when unknown):
    #: a reader's variant lists the follow-ups of the entries its filter selects, not the whole edition's.
    subsystems: list[str] = Field(default_factory=list)
    verdict: Verdict | None = None


class FilterRecord(BaseModel):
    """A variant's filter as it was when the variant was planned: ``digest resend`` renders the variant again
    with it, whatever its readers chose since."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    subsystems: list[str] = Field(default_factory=list)
    exclude: list[str] = Field(default_factory=list)
    min_verdict: Verdict = Verdict.SKIP
    budget: int = 5
    downstream: str | None = None


class VariantRecord(BaseModel):
    """One reader variant of an edition (prdigest/connect/variants.py): its readers, entries, read-first and lede."""

    model_config = ConfigDict(extra="forbid")

    #: The filter's key (``Filter.key``): the name of the variant's files.
    key: str
    #: The ids of the readers who share it.
    readers: list[str] = Field(default_factory=list)
    #: Its entries' PR numbers, in reading order.
    numbers: list[int] = Field(default_factory=list)
    #: The entries to read before anything else, best first: at most the variant's budget.
    read_first: list[int] = Field(default_factory=list)
    #: Two to four sentences about this variant's entries only (prdigest/connect/lede.py).
    lede: str = ""
    #: The filter it was planned with (None in editions recorded before it was kept).
    filter: FilterRecord | None = None


class DraftEntry(BaseModel):
    """What a drafter writes for one PR; the editor may change any of it."""

    model_config = ConfigDict(extra="forbid")
    _whole = field_validator("*", mode="before")(classmethod(_whole))

    number: int
    headline: str
    verdict: Verdict
    rationale: str
    focus: list[str] = Field(default_factory=list, max_length=5)
    followups: list[str] = Field(default_factory=list, max_length=5)
    audience: str = ""
    drafter: str = "offline"
    #: Citations (paths, identifiers) the draft makes that the PR's data does not support.
    grounding: list[str] = Field(default_factory=list)
    needs_editing: bool = False
    #: Why the editor should look (fallback draft, grounding failure, …); shown in review.
    warnings: list[str] = Field(default_factory=list)
    tokens_in: int = 0
    tokens_out: int = 0


class _FromDraft(Generic[T]):
    """An entry's attribute read from its draft's field of the same name (DraftEntry declares it once)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, entry: None, owner: type) -> "_FromDraft[T]": ...

    @overload
    def __get__(self, entry: "Entry", owner: type) -> T: ...

    def __get__(self, entry: "Entry | None", owner: type) -> "T | _FromDraft[T]":
        return self if entry is None else getattr(entry.draft, self.name)

    def __set__(self, entry: "Entry", value: object) -> None:
        # A data descriptor, so a stray instance attribute can never hide the draft's value.
        raise AttributeError(f"Entry.{self.name} belongs to the draft: use entry.model_copy(update=...)")


#: The keys of an entry in ``digest.json``, in order: the PR's facts and the draft's fields side by side.
ENTRY_KEYS: tuple[str, ...] = (
    "number", "url", "title", "author", "merged_at", "subsystems", "verdict", "headline", "rationale", "focus",
    "followups", "audience", "additions", "deletions", "files_changed", "status", "drafter", "grounding",
    "needs_editing", "warnings", "tokens_in", "tokens_out", "edit_distance", "relations", "changes", "breaking",
    "action", "impact", "coverage",
)


class Entry(BaseModel):
    """One PR's part of an edition: the PR's facts, its subsystems and its (reviewed) draft.

    The draft's fields read as the entry's own (``entry.headline``), and ``digest.json`` keeps entries flat:
    a flat mapping validates into an entry, and an entry serializes flat (:data:`ENTRY_KEYS`).
    """

    model_config = ConfigDict(extra="forbid", ignored_types=(_FromDraft,))
    _whole = field_validator("*", mode="before")(classmethod(_whole))

    url: str
    title: str
    author: str
    merged_at: datetime
    subsystems: list[str]
    additions: int = 0
    deletions: int = 0
    files_changed: int = 0
    draft: DraftEntry
    status: EntryStatus = EntryStatus.DRAFT
    #: Review (prdigest/review/): Levenshtein distance between the draft's and the sent headline + text;
    #: 0 when approved as drafted, None when rejected or not reviewed. The drafter's quality signal.
    edit_distance: int | None = None
    #: Links to other PRs of this edition or earlier ones (reverts, follow-ups, fixes).
    relations: list[Relation] = Field(default_factory=list)
    #: Code facts: what the diff did to the code (prdigest/collect/facts/), read from the files before and after.
    changes: list[Change] = Field(default_factory=list)
    #: True when a fact removes, renames, moves or changes the signature of something public (the editor may
    #: clear it); such entries open each variant's "Action required" block.
    breaking: bool = False
    #: What a reader must do, one sentence each (prdigest/kernel/actions.py; the editor may clear them): the
    #: "Action required" block shows exactly these.
    action: list[str] = Field(default_factory=list)
    #: The facts matched against the readers' downstream repositories (prdigest/connect/impact/).
    impact: list[Impact] = Field(default_factory=list)
    #: What the drafter was given of the PR (files, comments, issues), None when not recorded.
    coverage: Coverage | None = None

    number = _FromDraft[int]()
    headline = _FromDraft[str]()
    verdict = _FromDraft[Verdict]()
    rationale = _FromDraft[str]()
    focus = _FromDraft[list[str]]()
    followups = _FromDraft[list[str]]()
    audience = _FromDraft[str]()
    drafter = _FromDraft[str]()
    grounding = _FromDraft[list[str]]()
    needs_editing = _FromDraft[bool]()
    warnings = _FromDraft[list[str]]()
    tokens_in = _FromDraft[int]()
    tokens_out = _FromDraft[int]()

    @model_validator(mode="before")
    @classmethod
    def _nest_draft(cls, data: Any) -> Any:
        """Accept the flat shape of ``digest.json`` (and of keyword construction)."""
        if isinstance(data, dict) and "draft" not in data:
            data = dict(data)
            data["draft"] = {key: data.pop(key) for key in DraftEntry.model_fields if key in data}
        return data

    @model_serializer(mode="wrap")
    def _flatten(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        flat = {**data.pop("draft", {}), **data}
        return {key: flat[key] for key in ENTRY_KEYS if key in flat}

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy with ``update`` applied; the draft's fields (headline, verdict, …) update the draft."""
        changes = dict(update or {})
        drafted = {key: changes.pop(key) for key in list(changes) if key in DraftEntry.model_fields}
        if drafted:
            changes["draft"] = changes.get("draft", self.draft).model_copy(update=drafted, deep=deep)
        return super().model_copy(update=changes, deep=deep)

    @classmethod
    def from_draft(cls, pr: PullRequest, subsystems: list[str], draft: DraftEntry) -> "Entry":
        """Join a PR, its subsystems and its draft into an entry awaiting review."""
        if draft.number != pr.number:
            draft = draft.model_copy(update={"number": pr.number})
        return cls(url=pr.url, title=pr.title, author=pr.author, merged_at=pr.merged_at, subsystems=subsystems,
                   additions=pr.additions, deletions=pr.deletions, files_changed=len(pr.files), draft=draft,
                   changes=list(pr.changes), breaking=any(c.breaks for c in pr.changes))

    @property
    def published(self) -> bool:
        """True when the entry survived review and may reach readers."""
        return self.status in (EntryStatus.APPROVED, EntryStatus.EDITED)

    @property
    def flagged(self) -> bool:
        """True when the drafter asks for the editor's eye (fallback draft, warnings, grounding failures)."""
        return bool(self.needs_editing or self.warnings or self.grounding)


@dataclass(frozen=True)
class RenderProblem:
    """One PR that could not be rendered for one medium and variant; the rest of the message goes out.

    ``digest.json`` keeps it under ``problems`` as ``{number, medium, variant, error}``.
    """

    number: int
    medium: str
    variant: str
    error: str

    def __str__(self) -> str:
        return f"PR #{self.number} could not be rendered for {self.medium} ({self.variant}): {self.error}"


class Edition(BaseModel):
    """One digest for one repo and one window: the content of ``digest.json``."""

    model_config = ConfigDict(extra="forbid")
    _whole = field_validator("*", mode="before")(classmethod(_whole))

    repo: str
    since: datetime
    until: datetime
    language: str = DEFAULT
    drafter: str = "offline"
    approver: str | None = None
    approved_at: datetime | None = None
    review_note: str = ""
    generated_at: datetime
    entries: list[Entry] = Field(default_factory=list)
    #: PRs that could not be rendered for some medium and variant.
    problems: list[RenderProblem] = Field(default_factory=list)
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    #: Two to four sentences opening the edition (prdigest/connect/lede.py); editable in the review.
    lede: str = ""
    #: Related entries shown as one block; a number belongs to at most one story.
    stories: list[Story] = Field(default_factory=list)
    #: Follow-ups earlier editions suggested, done or still open (prdigest/connect/followups.py).
    earlier_followups: list[EarlierFollowup] = Field(default_factory=list)
    #: Every entry that deserves a place in some reader's read-first, best first (prdigest/connect/readfirst.py);
    #: the editor may move entries to its head (``first …``). Each variant takes its own entries from it.
    ranking: list[int] = Field(default_factory=list)
    #: One per reader variant: its readers, entries, read-first and lede (prdigest/connect/variants.py).
    variants: list[VariantRecord] = Field(default_factory=list)

    @property
    def id(self) -> "EditionId":
        """The edition's identity: the exact repo and window."""
        return EditionId(self.repo, self.since, self.until)

    @property
    def name(self) -> str:
        """Human name, unambiguous: ``vllm-project/vllm 2026-W47`` for a Monday-to-Monday week,
        ``vllm-project/vllm 2026-11-16..2026-11-19T12:00Z`` for any other window."""
        return self.id.name

    @property
    def week(self) -> str:
        year, week, _ = self.since.isocalendar()
        return f"{year}-W{week:02d}"

    @property
    def key(self) -> str:
        """A stable identifier safe for file names, ids and ledgers: ``vllm-project-vllm-2026-W47-1f0c9a2e``
        (the name as a slug, plus a hash of the exact repo and window: slugs alone collide)."""
        return self.id.key

    @property
    def published(self) -> list[Entry]:
        return [e for e in self.entries if e.published]


def _instant(moment: datetime) -> str:
    """An instant in UTC, exactly and briefly: ``2026-11-16`` (midnight), ``2026-11-16T08:30Z``, with
    seconds and microseconds only when they are not zero (one spelling per instant)."""
    moment = utc(moment)
    if (moment.hour, moment.minute, moment.second, moment.microsecond) == (0, 0, 0, 0):
        return moment.date().isoformat()
    if moment.microsecond:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ" if moment.second else "%Y-%m-%dT%H:%MZ")


@dataclass(frozen=True)
class EditionId:
    """What identifies an edition: its exact repo and window ``[since, until)``. Two editions differ as
    soon as the repo string or either end of the window differs (in the ledger, digest.json, status)."""

    repo: str
    since: datetime
    until: datetime

    @property
    def window(self) -> str:
        """``2026-W47`` for a Monday-00:00-to-Monday-00:00 week, else ``SINCE..UNTIL`` (see :func:`_instant`)."""
        since, until = utc(self.since), utc(self.until)
        if (since.weekday(), since.hour, since.minute, since.second, since.microsecond) == (0, 0, 0, 0, 0) \
                and until - since == _WEEK:
            year, week, _ = since.isocalendar()
            return f"{year}-W{week:02d}"
        return f"{_instant(since)}..{_instant(until)}"

    @property
    def name(self) -> str:
        """``vllm-project/vllm 2026-W47``: what people read and type (``digest status`` accepts it)."""
        return f"{self.repo} {self.window}"

    @property
    def exact(self) -> str:
        """``vllm-project/vllm@2026-11-16..2026-11-23``: the repo and both instants, always spelled out."""
        return f"{self.repo}@{_instant(self.since)}..{_instant(self.until)}"

    @property
    def key(self) -> str:
        """The name as a slug plus 8 hex digits of SHA-256 of :attr:`exact`."""
        digest = hashlib.sha256(self.exact.encode("utf-8")).hexdigest()[:8]
        return f"{slug(self.name, lower=False)}-{digest}"

    @property
    def legacy_key(self) -> str:
        """The key before editions were identified by their exact window (repo slug + ISO week of since):
        ledgers written then are found again by it."""
        year, week, _ = utc(self.since).isocalendar()
        return slug(f"{self.repo}-{year}-W{week:02d}", lower=False)


_WEEK = timedelta(days=7)
