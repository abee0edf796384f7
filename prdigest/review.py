"""The editor's review of an edition, without Prefect: the decision, its checks, applying it, the draft as
markdown, and the edit distance between what the drafter wrote and what was sent.

The decision is shaped for a real week (150 entries): one required choice (send / hold), "approve every
entry" on by default, PR numbers to reject as one line of text, and a short list of edits the editor adds
one card per entry they change. Prefect's form (``flows/review.py``) and ``digest approve`` both build a
:class:`ReviewDecision`, and both go through :func:`check_decision` before anything is applied.
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import datetime, timezone
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from prdigest.errors import ReviewError
from prdigest.models import Edition, Entry, EntryStatus, Verdict
from prdigest.store import Store

#: How long an edition waits for an editor before the run fails and nothing is sent.
DEFAULT_REVIEW_TIMEOUT = 3 * 24 * 3600
MAX_HEADLINE = 200
MAX_TEXT = 4000
#: Entries that need the editor's eye are pre-filled as edit cards, up to this many.
MAX_PREFILLED_EDITS = 10

VerdictChoice = Literal["keep", "deep-read", "skim", "skip"]


class ReviewRejected(ReviewError):
    """The editor's input failed our checks; the message lists every reason, one per line."""

    def __init__(self, reasons: list[str]) -> None:
        super().__init__("; ".join(reasons))
        self.reasons = reasons


class ReviewExpired(ReviewError):
    """Nobody resumed the review in time: the run fails and nothing is sent."""


class EntryEdit(BaseModel):
    """One entry the editor changes: empty fields keep the draft's value."""

    model_config = ConfigDict(extra="forbid")

    number: int = Field(description="PR number of the entry to change")
    verdict: VerdictChoice = Field(default="keep", description="keep = the drafted verdict")
    headline: str = Field(default="", description="New headline; empty keeps the draft's")
    text: str = Field(default="", description="New text (the why); empty keeps the draft's")


class ReviewDecision(BaseModel):
    """What an editor decides about one edition (the fields of the resume form, in order)."""

    model_config = ConfigDict(extra="forbid")

    decision: Literal["send", "hold"] = Field(
        description="send: deliver the approved entries. hold: send nothing this week.")
    approver: str = Field(default="", description="Your name, recorded in digest.json")
    approve_all: bool = Field(default=True, description="Approve every entry not listed under Reject")
    reject: str = Field(default="", description="PR numbers to leave out, e.g. 41873 41902")
    approve: str = Field(default="", description="Only when 'Approve all' is off: PR numbers to send")
    edits: list[EntryEdit] = Field(default_factory=list,
                                   description="Add an item per entry you change (PR number + new values)")
    note: str = Field(default="", description="A note for the record (optional)")


def parse_numbers(text: str, field: str) -> tuple[list[int], list[str]]:
    """PR numbers from free text ('41873, #41902 41910'); the second list holds the reasons it is not."""
    numbers: list[int] = []
    errors: list[str] = []
    for token in re.split(r"[\s,;]+", text.strip()):
        if not token:
            continue
        if re.fullmatch(r"#?\d{1,9}", token):
            numbers.append(int(token.lstrip("#")))
        else:
            errors.append(f"{field}: '{token[:40]}' is not a PR number")
    return numbers, errors


def check_decision(edition: Edition, decision: ReviewDecision) -> list[str]:
    """Every reason the decision cannot be applied to the edition; empty when it can."""
    known = {e.number for e in edition.entries}
    reasons: list[str] = []
    rejected, errs = parse_numbers(decision.reject, "reject")
    reasons += errs
    approved, errs = parse_numbers(decision.approve, "approve")
    reasons += errs
    for field, numbers in (("reject", rejected), ("approve", approved), ("edits", [e.number for e in decision.edits])):
        unknown = sorted(set(numbers) - known)
        if unknown:
            reasons.append(f"{field}: PR {', '.join(f'#{n}' for n in unknown)} is not in {edition.name}")
    if decision.decision == "hold":
        return reasons
    if not decision.approver.strip():
        reasons.append("approver: type your name: it is recorded as who approved the edition")
    if decision.approve_all and approved:
        reasons.append("approve: lists PR numbers but 'Approve all' is on; turn it off or clear the list")
    both = sorted(set(rejected) & set(approved))
    if both:
        reasons.append(f"PR {', '.join(f'#{n}' for n in both)} is both approved and rejected")
    seen: set[int] = set()
    scale = {v.value for v in Verdict} | {"keep"}
    entries = {e.number: e for e in edition.entries}
    for i, edit in enumerate(decision.edits):
        where = f"edits[{i}] (PR #{edit.number})"
        if edit.number in seen:
            reasons.append(f"{where}: the entry is edited twice; merge the two items")
        seen.add(edit.number)
        # A pre-filled card left as drafted may stay in the list of a rejected entry; a real edit may not.
        if edit.number in rejected and edit.number in entries and _changes(entries[edit.number], edit):
            reasons.append(f"{where}: the entry is also listed under Reject; edit or reject it, not both")
        if edit.verdict not in scale:
            reasons.append(f"{where}: verdict '{edit.verdict}' is not one of deep-read, skim, skip")
        if edit.headline and not edit.headline.strip():
            reasons.append(f"{where}: the headline is blank; type one or leave it empty to keep the draft's")
        if len(edit.headline) > MAX_HEADLINE:
            reasons.append(f"{where}: the headline has {len(edit.headline)} characters (at most {MAX_HEADLINE})")
        if edit.text and not edit.text.strip():
            reasons.append(f"{where}: the text is blank; type it or leave it empty to keep the draft's")
        if len(edit.text) > MAX_TEXT:
            reasons.append(f"{where}: the text has {len(edit.text)} characters (at most {MAX_TEXT})")
    if not reasons and not _selected(edition, decision):
        reasons.append("send: no entry would be approved; choose 'hold' to send nothing this week")
    return reasons


def _selected(edition: Edition, decision: ReviewDecision) -> set[int]:
    """PR numbers the decision approves (assumes it passed the checks)."""
    rejected = set(parse_numbers(decision.reject, "reject")[0])
    if decision.approve_all:
        chosen = {e.number for e in edition.entries}
    else:
        entries = {e.number: e for e in edition.entries}
        chosen = set(parse_numbers(decision.approve, "approve")[0]) | {
            e.number for e in decision.edits if e.number in entries and _changes(entries[e.number], e)}
    return chosen - rejected


def _changes(entry: Entry, edit: EntryEdit) -> bool:
    """True when the card changes the entry (a pre-filled card left as drafted does not)."""
    final = _edited(entry, edit)
    return (final.verdict, final.headline, final.rationale) != (entry.verdict, entry.headline, entry.rationale)


def apply_decision(edition: Edition, decision: ReviewDecision, now: datetime | None = None) -> Edition:
    """The reviewed edition: each entry approved, edited or rejected, with the approver, time and note.

    Raises :class:`ReviewRejected` when :func:`check_decision` finds anything: nothing is applied in part.
    """
    reasons = check_decision(edition, decision)
    if reasons:
        raise ReviewRejected(reasons)
    now = now or datetime.now(timezone.utc)
    chosen = _selected(edition, decision) if decision.decision == "send" else set()
    edits = {e.number: e for e in decision.edits}
    entries: list[Entry] = []
    for entry in edition.entries:
        if entry.number not in chosen:
            entries.append(entry.model_copy(update={"status": EntryStatus.REJECTED, "edit_distance": None}))
            continue
        final = _edited(entry, edits.get(entry.number))
        distance = edit_distance(entry_text(entry), entry_text(final))
        status = EntryStatus.EDITED if distance or final.verdict != entry.verdict else EntryStatus.APPROVED
        entries.append(final.model_copy(update={"status": status, "edit_distance": distance}))
    note = decision.note.strip()
    if decision.decision == "hold":
        note = f"held: nothing sent. {note}".strip()
    return edition.model_copy(update={
        "entries": entries, "approver": decision.approver.strip() or None, "approved_at": now,
        "review_note": note,
    })


def _edited(entry: Entry, edit: EntryEdit | None) -> Entry:
    if edit is None:
        return entry
    update: dict[str, object] = {}
    if edit.verdict != "keep":
        update["verdict"] = Verdict(edit.verdict)
    if edit.headline.strip():
        update["headline"] = edit.headline.strip()
    if edit.text.strip():
        update["rationale"] = edit.text.strip()
    return entry.model_copy(update=update)


def entry_text(entry: Entry) -> str:
    """The part of an entry an editor edits, as one text: headline, then the why."""
    return f"{entry.headline}\n{entry.rationale}"


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance (insertions, deletions, substitutions of characters) between two texts."""
    if a == b:
        return 0
    # Strip the common prefix and suffix: edits are usually local, which keeps the table small.
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end = 0
    while end < min(len(a), len(b)) - start and a[-1 - end] == b[-1 - end]:
        end += 1
    a, b = a[start:len(a) - end], b[start:len(b) - end]
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def prefilled_edits(edition: Edition) -> list[EntryEdit]:
    """Edit cards for the entries the drafter flagged (fallback drafts, grounding failures), pre-filled."""
    flagged = [e for e in edition.entries if e.needs_editing or e.warnings or e.grounding]
    return [EntryEdit(number=e.number, verdict=e.verdict.value, headline=e.headline, text=e.rationale)
            for e in flagged[:MAX_PREFILLED_EDITS]]


# ---------------------------------------------------------------------------------------------- markdown

# Backticks stay: drafts quote code as `name`, and a code span cannot hold a tag, link or image.
_MD_SPECIAL = re.compile(r"([\\*_\[\]<>|~])")
_MD_LINE_START = re.compile(r"^(\d*)([#+=>.)-])")


def md(text: str, limit: int | None = None) -> str:
    """Untrusted text (PR titles, LLM output) as inert inline markdown: one line, markup characters escaped
    (no tag, link, image, emphasis or table cell can come from a PR), list/heading starts defused."""
    text = re.sub(r"\s+", " ", text).strip()
    if limit and len(text) > limit:
        text = text[: limit - 1] + "…"
    return _MD_LINE_START.sub(r"\1\\\2", _MD_SPECIAL.sub(r"\\\1", text))


def _link(url: str, text: str = "") -> str:
    # Only plain http(s) URLs become links; anything else is shown as text.
    if not re.fullmatch(r"https?://[^\s<>()\[\]]+", url):
        return md(f"{text} {url}".strip())
    return f"[{text}]({url})" if text else f"<{url}>"


#: Above this many characters the form's description lists entries one line each (the full draft goes to
#: the markdown artifact): the V2 UI re-renders the description on every keystroke in the form, and a
#: 113,000-character description for 150 entries made each keystroke take ~0.6 s (benchmarks/review_page.py).
FULL_DESCRIPTION_BUDGET = 12_000


def review_markdown(edition: Edition, *, deadline: datetime | None = None, run_hint: str = "",
                    budget: int | None = FULL_DESCRIPTION_BUDGET, artifact_hint: str = "") -> str:
    """The draft digest as the editor reads it above the form: counts, then every entry with its warnings.

    With ``budget`` and an edition whose full text exceeds it, entries are listed one line each (number,
    verdict, headline, subsystems, link, warnings) and only the flagged entries keep their full text.
    """
    per_verdict = Counter(e.verdict.value for e in edition.entries)
    per_subsystem = Counter(s for e in edition.entries for s in e.subsystems)
    flagged = [e for e in edition.entries if _flagged(e)]
    lines = [
        f"## {md(edition.name)}: {len(edition.entries)} draft entries",
        "",
        "**To send:** choose *send* under Decision, type your name, then Resume. To leave entries out, "
        "list their PR numbers under *Reject*. To change an entry, add an item under *Edits* with its PR "
        "number and only the fields you change. *hold* sends nothing.",
    ]
    if deadline is not None:
        lines += ["", f"Waiting until **{deadline:%Y-%m-%d %H:%M} UTC**. After that the run fails and "
                      "nothing is sent."]
    if run_hint:
        lines += ["", run_hint]
    lines += ["", "| verdict | entries |", "| --- | ---: |"]
    lines += [f"| {v.value} | {per_verdict.get(v.value, 0)} |" for v in Verdict]
    lines += ["", "**Subsystems:** " + (", ".join(f"{md(s)} {n}" for s, n in per_subsystem.most_common()) or "none")]
    drafters = Counter(e.drafter for e in edition.entries)
    cost = f", estimated cost ${edition.cost_usd:.2f}" if edition.cost_usd else ""
    lines += ["", f"**Drafted by:** {', '.join(f'{md(d)} {n}' for d, n in drafters.most_common())}; "
                  f"tokens in {edition.tokens_in}, out {edition.tokens_out}{cost}"]
    if flagged:
        lines += ["", f"**Needs your eye ({len(flagged)}):** " + ", ".join(f"#{e.number}" for e in flagged)]
    head = "\n".join(lines)
    full = [head]
    for verdict in Verdict:
        group = [e for e in edition.entries if e.verdict is verdict]
        if group:
            full += ["", f"### {verdict.value} ({len(group)})"]
            for entry in group:
                full += ["", *entry_markdown(entry)]
    text = "\n".join(full) + "\n"
    if budget is None or len(text) <= budget:
        return text
    compact = [head]
    if flagged:
        compact += ["", f"### Needs your eye ({len(flagged)})"]
        for entry in flagged[:10]:
            compact += ["", *entry_markdown(entry)]
    compact += ["", f"### All {len(edition.entries)} entries, one line each"]
    if artifact_hint:
        compact += ["", artifact_hint]
    for verdict in Verdict:
        group = [e for e in edition.entries if e.verdict is verdict]
        if group:
            compact += ["", f"**{verdict.value} ({len(group)})**", ""]
            compact += [f"- {_link(e.url, f'#{e.number}')} {md(e.headline, 160)} · {md(', '.join(e.subsystems))}"
                        f"{' ⚠' if _flagged(e) else ''}" for e in group]
    return "\n".join(compact) + "\n"


def _flagged(entry: Entry) -> bool:
    return bool(entry.needs_editing or entry.warnings or entry.grounding)


def entry_markdown(entry: Entry) -> list[str]:
    """One entry as markdown lines: headline, PR facts, why, focus points, follow-ups, warnings."""
    mark = " ⚠" if _flagged(entry) else ""
    lines = [
        f"**#{entry.number} {md(entry.headline, 300)}**{mark}  ",
        f"{_link(entry.url)} · {md(entry.title, 200)} · {md(entry.author, 60)} · "
        f"+{entry.additions}/−{entry.deletions} · {md(', '.join(entry.subsystems))} · *{entry.verdict.value}*  ",
        md(entry.rationale, 1200),
    ]
    if entry.focus:
        lines += ["", *[f"{i}. {md(point, 400)}" for i, point in enumerate(entry.focus, start=1)]]
    if entry.followups:
        lines += ["", *[f"- follow-up: {md(item, 400)}" for item in entry.followups]]
    notes = [md(w, 300) for w in entry.warnings]
    if entry.grounding:
        notes.append("not supported by the PR: " + ", ".join(f"`{g.replace('`', '')[:80]}`" for g in entry.grounding))
    if entry.drafter in ("placeholder", "fallback") or entry.needs_editing:
        notes.append(f"drafter: {md(entry.drafter)}, needs editing")
    if entry.tokens_in or entry.tokens_out:
        notes.append(f"tokens {entry.tokens_in}/{entry.tokens_out}")
    if notes:
        lines += ["", "> ⚠ " + "; ".join(notes)]
    return lines


def decision_summary(edition: Edition) -> Counter[str]:
    """Entries per review status."""
    return Counter(e.status.value for e in edition.entries)


# ---------------------------------------------------------------------------------------------- store

MIGRATIONS = [
    """
    CREATE TABLE review_editions (
        edition TEXT PRIMARY KEY, approver TEXT, approved_at TEXT NOT NULL, note TEXT NOT NULL,
        run_id TEXT, approved INTEGER NOT NULL, edited INTEGER NOT NULL, rejected INTEGER NOT NULL);
    CREATE TABLE review_entries (
        edition TEXT NOT NULL, number INTEGER NOT NULL, status TEXT NOT NULL, draft_verdict TEXT NOT NULL,
        final_verdict TEXT NOT NULL, edit_distance INTEGER, drafter TEXT NOT NULL,
        PRIMARY KEY (edition, number))
    """,
]


_EDITION = (
    "INSERT INTO review_editions (edition, approver, approved_at, note, run_id, approved, edited, rejected) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (edition) DO UPDATE SET approver = excluded.approver, "
    "approved_at = excluded.approved_at, note = excluded.note, run_id = excluded.run_id, "
    "approved = excluded.approved, edited = excluded.edited, rejected = excluded.rejected")
_ENTRY = (
    "INSERT INTO review_entries (edition, number, status, draft_verdict, final_verdict, edit_distance, drafter) "
    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (edition, number) DO UPDATE SET status = excluded.status, "
    "draft_verdict = excluded.draft_verdict, final_verdict = excluded.final_verdict, "
    "edit_distance = excluded.edit_distance, drafter = excluded.drafter")


def record_review(conn: Store, draft: Edition, reviewed: Edition, run_id: str | None = None) -> None:
    """Store who approved the edition, when, and per entry its status and edit distance (the drafter's signal)."""
    conn.migrate("review", MIGRATIONS)
    counts = decision_summary(reviewed)
    drafts = {e.number: e for e in draft.entries}
    with conn.transaction():
        conn.execute(
            _EDITION,
            (reviewed.key, reviewed.approver, (reviewed.approved_at or datetime.now(timezone.utc)).isoformat(),
             reviewed.review_note, run_id, counts.get("approved", 0), counts.get("edited", 0),
             counts.get("rejected", 0)))
        conn.executemany(
            _ENTRY,
            [(reviewed.key, e.number, e.status.value, drafts[e.number].verdict.value if e.number in drafts
              else e.verdict.value, e.verdict.value, e.edit_distance, e.drafter) for e in reviewed.entries])
