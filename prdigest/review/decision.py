"""The editor's decision about one edition: its model, its checks, and applying it to the draft.

The decision is shaped for a real week (150 entries): one required choice (send / hold), "approve every
unflagged entry" on by default, PR numbers to reject or to approve as one line of text each, and the edits the
editor adds (none pre-filled). A flagged entry (:attr:`Entry.flagged`: a fallback draft, a grounding failure,
a warning) is never sent unseen: only when the editor names it under *approve*, edits it, or turns on
*include flagged* (off by default). Prefect's form (``flows/review_form.py``: the edits as one text field,
:func:`parse_edits`) and ``digest approve`` both build a :class:`ReviewDecision`, and both go through
:func:`check_decision` before anything is applied.
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import datetime, timezone
from typing import Literal, cast

from pydantic import BaseModel, ConfigDict, Field, field_validator
from rapidfuzz.distance import Levenshtein

from prdigest.connect.followups import confirm
from prdigest.connect.lede import check_lede, offline_lede
from prdigest.kernel.errors import ReviewError
from prdigest.kernel.models import Edition, Entry, EntryStatus, Verdict
from prdigest.kernel.prtext.restate import restated, without_label
from prdigest.kernel.surrogates import scrub_data
from prdigest.review.accepted import accepted_impacts, without

_CJK = re.compile("[\u4e00-\u9fff]")

MAX_HEADLINE = 200
MAX_TEXT = 4000

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
    # The resume form's JSON may carry a lone surrogate (``\\ud800``): made U+FFFD before it is stored or sent.
    _whole = field_validator("*", mode="before")(classmethod(lambda cls, v: scrub_data(v)))

    number: int = Field(description="PR number of the entry to change")
    verdict: VerdictChoice = Field(default="keep", description="keep = the drafted verdict")
    headline: str = Field(default="", description="New headline; empty keeps the draft's")
    text: str = Field(default="", description="New text (the why); empty keeps the draft's")
    points: str = Field(default="", description="New points to look at, separated by ' | '; 'none' for none; "
                                                "empty keeps the draft's")
    followups: str = Field(default="", description="New follow-ups, separated by ' | '; 'none' for none; empty "
                                                   "keeps the draft's")


class ReviewDecision(BaseModel):
    """What an editor decides about one edition (the fields of the resume form, in order)."""

    model_config = ConfigDict(extra="forbid")
    # The resume form's JSON may carry a lone surrogate (``\\ud800``): made U+FFFD before it is stored or sent.
    _whole = field_validator("*", mode="before")(classmethod(lambda cls, v: scrub_data(v)))

    decision: Literal["send", "hold"] = Field(
        description="send: deliver the approved entries. hold: send nothing this week.")
    approver: str = Field(default="", description="Your name, recorded in digest.json")
    approve_all: bool = Field(default=True, description="Approve every unflagged entry not listed under Reject")
    reject: str = Field(default="", description="PR numbers to leave out, e.g. 41873 41902")
    approve: str = Field(default="", description="PR numbers to send: flagged (⚠) entries to include, or, with "
                                                 "'Approve all' off, the only entries sent")
    include_flagged: bool = Field(default=False, description="Send the flagged (⚠) entries as drafted too")
    edits: list[EntryEdit] = Field(default_factory=list,
                                   description="Add an item per entry you change (PR number + new values)")
    note: str = Field(default="", description="A note for the record (optional)")
    #: The edition's opening sentences as the editor rewrote them (a ``lede …`` line); empty keeps the drafted.
    lede: str = Field(default="", description="A new lede (the edition's opening sentences); empty keeps it")
    #: Earlier follow-ups the semantic match proposed and the editor confirms as done (``confirm 1 3``: their
    #: numbers in the review's list).
    confirm: str = Field(default="", description="Proposed earlier follow-ups to confirm as done, by number")
    #: PR numbers to put at the head of read-first, in this order (a ``first …`` line); empty keeps the ranking.
    first: str = Field(default="", description="PR numbers to read first, best first, e.g. 41873 41902")
    #: PR numbers whose breaking mark the editor clears (a ``nobreak …`` line): they leave "Action required".
    nobreak: str = Field(default="", description="PR numbers that are not breaking after all, e.g. 41873")
    #: "Not a break" for a downstream's use (``accept SYMBOL PATH`` lines, ``;``-separated): those impacts are
    #: left out, and kept cleared for later runs and alerts (prdigest/review/accepted.py).
    accept: str = Field(default="", description="Not a break: 'SYMBOL PATH' pairs, ';'-separated, e.g. "
                                                "FusedMoE.forward vllm_ascend/ops/fused_moe.py")
    #: The content hash of the draft the editor was shown (prdigest.snapshot.content_hash), pre-filled by the
    #: form and ``digest approve``: a decision on other content is refused and nothing is sent.
    snapshot: str = Field(default="", description="The reviewed draft's content hash (pre-filled: leave it as is)")


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
    reasons += _check_connections(edition, decision)
    if decision.decision == "hold":
        return reasons
    if not decision.approver.strip():
        reasons.append("approver: type your name: it is recorded as who approved the edition")
    both = sorted(set(rejected) & set(approved))
    if both:
        reasons.append(f"PR {', '.join(f'#{n}' for n in both)} is both approved and rejected")
    entries = {e.number: e for e in edition.entries}
    reasons += _check_edits(decision.edits, entries, set(rejected))
    if not reasons and not _selected(edition, decision):
        flagged = flagged_numbers(edition)
        hint = (f" ({len(flagged)} flagged entries go out only when approved by number, edited, or with the "
                "flagged included)" if flagged else "")
        reasons.append(f"send: no entry would be approved{hint}; choose 'hold' to send nothing this week")
    return reasons


def _check_connections(edition: Edition, decision: ReviewDecision) -> list[str]:
    """Why the lede or the follow-up confirmations cannot be applied."""
    reasons: list[str] = []
    if len(decision.lede) > MAX_TEXT:
        reasons.append(f"lede: {len(decision.lede)} characters (at most {MAX_TEXT})")
    positions, errs = parse_numbers(decision.confirm, "confirm")
    reasons += errs
    first, errs = parse_numbers(decision.first, "first")
    reasons += errs
    unknown = sorted(set(first) - {e.number for e in edition.entries})
    if unknown:
        reasons.append(f"first: PR {', '.join(f'#{n}' for n in unknown)} is not in {edition.name}")
    rejected = set(parse_numbers(decision.reject, "reject")[0]) & set(first)
    if rejected:
        reasons.append(f"first: PR {', '.join(f'#{n}' for n in sorted(rejected))} is also rejected")
    if len(set(first)) != len(first):
        reasons.append("first: a PR is named twice")
    nobreak, errs = parse_numbers(decision.nobreak, "nobreak")
    reasons += errs
    entries = {e.number: e for e in edition.entries}
    unknown = sorted(set(nobreak) - set(entries))
    if unknown:
        reasons.append(f"nobreak: PR {', '.join(f'#{n}' for n in unknown)} is not in {edition.name}")
    unmarked = sorted(n for n in set(nobreak) & set(entries) if not (entries[n].breaking or entries[n].action))
    if unmarked:
        reasons.append(f"nobreak: PR {', '.join(f'#{n}' for n in unmarked)} is neither marked breaking nor asks an "
                       f"action (the review lists the marked ones under Action required)")
    reasons += accepted_impacts(edition, decision.accept)[1]
    items = edition.earlier_followups
    for n in positions:
        if not 1 <= n <= len(items) or items[n - 1].proposed_by is None or items[n - 1].status != "open":
            reasons.append(f"confirm: {n} is not a proposed earlier follow-up of {edition.name} "
                           f"(the review lists them as 'confirm N')")
    return reasons


def _check_edits(edits: list[EntryEdit], entries: dict[int, Entry], rejected: set[int]) -> list[str]:
    """The reasons the edit cards cannot be applied, each naming its card and PR."""
    reasons: list[str] = []
    seen: set[int] = set()
    scale = {v.value for v in Verdict} | {"keep"}
    for i, edit in enumerate(edits):
        where = f"edits[{i}] (PR #{edit.number})"
        if edit.number in seen:
            reasons.append(f"{where}: the entry is edited twice; merge the two items")
        seen.add(edit.number)
        if edit.number in rejected:
            reasons.append(f"{where}: the entry is also rejected; edit or reject it, not both")
        elif edit.number in entries and edit.verdict in scale and not _changes(entries[edit.number], edit):
            reasons.append(f"{where}: changes nothing; give a new verdict, headline or text, or remove it "
                           "(to send a flagged entry as drafted, approve it by number)")
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
        for name, given in (("points", edit.points), ("followups", edit.followups)):
            items = split_items(given) if given.strip() else []
            if len(items) > MAX_ITEMS:
                reasons.append(f"{where}: {len(items)} {name} (at most {MAX_ITEMS}; separate them with ' | ')")
            if any(len(item) > MAX_HEADLINE * 2 for item in items):
                reasons.append(f"{where}: one of the {name} has over {MAX_HEADLINE * 2} characters")
    return reasons


def _selected(edition: Edition, decision: ReviewDecision) -> set[int]:
    """PR numbers the decision approves (assumes it passed the checks): with *approve all*, every unflagged
    entry; a flagged one only when named, edited, or with *include flagged*; never a rejected one."""
    rejected = set(parse_numbers(decision.reject, "reject")[0])
    entries = {e.number: e for e in edition.entries}
    flagged = {n for n, e in entries.items() if e.flagged}
    chosen = set(parse_numbers(decision.approve, "approve")[0]) | {
        e.number for e in decision.edits if e.number in entries and _changes(entries[e.number], e)}
    if decision.approve_all:
        chosen |= set(entries) - flagged
    if decision.include_flagged:
        chosen |= flagged
    return chosen - rejected


def flagged_numbers(edition: Edition) -> list[int]:
    """The PR numbers of the entries that need the editor's eye, in edition order."""
    return [e.number for e in edition.entries if e.flagged]


def flagged_left_out(edition: Edition, decision: ReviewDecision) -> list[int]:
    """The flagged entries the decision does not send (not named, edited or included), in edition order."""
    chosen = _selected(edition, decision) if decision.decision == "send" else set()
    return [n for n in flagged_numbers(edition) if n not in chosen]


def _changes(entry: Entry, edit: EntryEdit) -> bool:
    """True when the card changes the entry (a pre-filled card left as drafted does not)."""
    final = _edited(entry, edit)
    return _shape(final) != _shape(entry)


def _shape(entry: Entry) -> tuple[object, ...]:
    """What an edit may change of an entry."""
    return (entry.verdict, entry.headline, entry.rationale, entry.focus, entry.followups)


def apply_decision(edition: Edition, decision: ReviewDecision, now: datetime | None = None) -> Edition:
    """The reviewed edition: each entry approved, edited or rejected, with the approver, time and note.

    Raises :class:`ReviewRejected` when :func:`check_decision` finds anything: nothing is applied in part.
    """
    reasons = check_decision(edition, decision)
    if reasons:
        raise ReviewRejected(reasons)
    now = now or datetime.now(timezone.utc)
    if decision.decision == "hold":  # the edition is held, not its entries rejected: they stay as drafted
        note = f"held: nothing sent. {decision.note.strip()}".strip()
        return edition.model_copy(update={"approver": decision.approver.strip() or None, "approved_at": now,
                                          "review_note": note})
    chosen = _selected(edition, decision)
    edits = {e.number: e for e in decision.edits}
    cleared = set(parse_numbers(decision.nobreak, "nobreak")[0])
    entries: list[Entry] = []
    for entry in without(list(edition.entries), accepted_impacts(edition, decision.accept)[0]):
        if entry.number in cleared:
            entry = entry.model_copy(update={"breaking": False, "action": []})
        if entry.number not in chosen:
            entries.append(entry.model_copy(update={"status": EntryStatus.REJECTED, "edit_distance": None}))
            continue
        final = _edited(entry, edits.get(entry.number), edition.language)
        distance = edit_distance(entry_text(entry), entry_text(final))
        status = EntryStatus.EDITED if distance or _shape(final) != _shape(entry) else EntryStatus.APPROVED
        entries.append(final.model_copy(update={"status": status, "edit_distance": distance}))
    note = decision.note.strip()

    first = parse_numbers(decision.first, "first")[0]
    reviewed = edition.model_copy(update={
        "entries": entries, "approver": decision.approver.strip() or None, "approved_at": now, "review_note": note,
        "earlier_followups": confirm(edition.earlier_followups, parse_numbers(decision.confirm, "confirm")[0]),
        "ranking": first + [n for n in edition.ranking if n not in first],
    })
    if first:  # the drafted ledes named the old first reads: each variant's is written again from the new order
        reviewed = reviewed.model_copy(update={"variants": [v.model_copy(update={"lede": ""})
                                                            for v in edition.variants]})
    # The editor's lede is theirs; the drafted one must still be grounded once entries are rejected.
    lede = " ".join(decision.lede.split()) or edition.lede
    if not decision.lede.strip() and lede and (first or check_lede(lede, reviewed)):
        lede = offline_lede(reviewed)
    return reviewed.model_copy(update={"lede": lede})


def _edited(entry: Entry, edit: EntryEdit | None, language: str | None = None) -> Entry:
    if edit is None:
        return entry
    update: dict[str, object] = {}
    if edit.verdict != "keep":
        update["verdict"] = Verdict(edit.verdict)
    if edit.headline.strip():
        update["headline"] = edit.headline.strip()
    if edit.text.strip():
        update["rationale"] = edit.text.strip()
    for name, given in (("focus", edit.points), ("followups", edit.followups)):
        if given.strip():
            update[name] = split_items(given)
    if "verdict" in update or "rationale" in update:
        # The text opens with the final verdict's own words, whoever changed which.
        language = language or ("zh-CN" if _CJK.search(entry.rationale) else "en")
        update["rationale"] = restated(str(update.get("rationale", entry.rationale)),
                                       Verdict(update.get("verdict", entry.verdict)), language)
    return entry.model_copy(update=update)


#: The most points or follow-ups an entry holds.
MAX_ITEMS = 5


def split_items(text: str) -> list[str]:
    """Points or follow-ups as an editor types them: separated by `` | `` (or one a line); ``none`` (or ``-``) for
    none."""
    if text.strip().lower() in ("none", "-"):
        return []
    return [" ".join(p.split()) for p in re.split(r"\s\|\s|\n", text) if p.strip()]


def entry_text(entry: Entry) -> str:
    """The part of an entry an editor edits, as one text: headline, then the why (without the verdict's label,
    which follows the verdict: a changed verdict is counted by the status, not as an edit of the text)."""
    return f"{entry.headline}\n{without_label(entry.rationale)}"


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance (insertions, deletions, substitutions of characters) between two texts."""
    return Levenshtein.distance(a, b)


_EDIT_LINE = re.compile(r"#?(\d{1,9})(?:\s+(.*))?")
_EDIT_FIELD = re.compile(r"(?:^|\s)(verdict|headline|text|points|followups)=")
_KEYWORD_LINE = re.compile(r"(reject|approve|note|lede|confirm|first|nobreak|accept)\b:?\s*(.*)", re.IGNORECASE)


def parse_edits(text: str) -> tuple[list[EntryEdit], list[str]]:
    """Edits written one per line, ``#41873 verdict=skim headline=New headline text=New why`` (only the fields
    given change; a value runs to the next ``name=``); the second list holds why a line is not one."""
    edits: list[EntryEdit] = []
    errors: list[str] = []
    for n, raw in enumerate(text.splitlines(), start=1):
        edit, error = _edit_line(raw.strip(), n)
        errors += [error] if error else []
        edits += [edit] if edit else []
    return edits, errors


def _edit_line(line: str, n: int) -> tuple[EntryEdit | None, str | None]:
    if not line:
        return None, None
    match = _EDIT_LINE.fullmatch(line)
    if match is None:
        return None, (f"line {n}: '{line[:40]}' is neither reject, approve, note nor a PR number "
                      "(write: #41873 verdict=skim headline=… text=…)")
    where = f"line {n} (PR #{match.group(1)})"
    rest = match.group(2) or ""
    parts = _EDIT_FIELD.split(rest)
    if parts[0].strip() or len(parts) < 3:
        return None, (f"{where}: give verdict=, headline=, text=, points= or followups= "
                      f"(found '{(parts[0].strip() or rest)[:40]}')")
    values: dict[str, str] = {}
    for name, value in zip(parts[1::2], parts[2::2]):
        if name in values:
            return None, f"{where}: {name}= is given twice"
        values[name] = value.strip()
    verdict = values.get("verdict", "keep")
    if verdict not in {v.value for v in Verdict} | {"keep"}:
        return None, f"{where}: verdict '{verdict[:20]}' is not one of deep-read, skim, skip"
    # cast: ``verdict`` was checked against the choices just above
    return EntryEdit(number=int(match.group(1)), verdict=cast(VerdictChoice, verdict),
                     headline=values.get("headline", ""), text=values.get("text", ""),
                     points=values.get("points", ""), followups=values.get("followups", "")), None


def parse_changes(text: str) -> tuple[dict[str, object], list[str]]:
    """The review form's one *Changes* field, a line per change: ``reject 41873 41902``, ``approve 41910`` (a
    flagged entry to send), ``#41873 verdict=skim headline=… text=…`` (an edit), ``note …``. Returns the
    :class:`ReviewDecision` fields it sets (``reject``, ``approve``, ``edits``, ``note``; ``lede``, ``confirm``
    and ``first 41873 41902``, read-first's new head, and ``nobreak 41873``, breaking marks cleared, when given)
    and why a line is not one of these."""
    reject: list[str] = []
    approve: list[str] = []
    notes: list[str] = []
    ledes: list[str] = []
    confirms: list[str] = []
    firsts: list[str] = []
    nobreaks: list[str] = []
    accepts: list[str] = []
    edits: list[EntryEdit] = []
    errors: list[str] = []
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        keyword = _KEYWORD_LINE.fullmatch(line)
        if keyword is not None:
            word, rest = keyword.group(1).lower(), keyword.group(2).strip()
            if word in ("note", "lede"):
                (notes if word == "note" else ledes).append(rest)
                continue
            if word in ("confirm", "first", "nobreak", "accept"):
                {"confirm": confirms, "first": firsts, "nobreak": nobreaks, "accept": accepts}[word].append(rest)
                continue
            numbers, bad = parse_numbers(rest, f"line {n} ({word})")
            errors += bad
            (reject if word == "reject" else approve).extend(str(x) for x in numbers)
            continue
        edit, error = _edit_line(line, n)
        errors += [error] if error else []
        edits += [edit] if edit else []
    fields: dict[str, object] = {"reject": " ".join(reject), "approve": " ".join(approve), "edits": edits,
                                 "note": " ".join(notes)}
    # The connections' lines only when given (a lede to rewrite, proposed follow-ups to confirm).
    fields.update({k: " ".join(v) for k, v in (("lede", ledes), ("confirm", confirms), ("first", firsts),
                                                ("nobreak", nobreaks)) if v})
    if accepts:  # each line one pair
        fields["accept"] = "; ".join(accepts)
    return fields, errors


def changes_text(decision: ReviewDecision) -> str:
    """The *Changes* text that :func:`parse_changes` reads back into the decision's reject, approve, edits, note."""
    lines = [f"reject {decision.reject}" if decision.reject.strip() else "",
             f"approve {decision.approve}" if decision.approve.strip() else ""]
    for edit in decision.edits:
        fields = [f"verdict={edit.verdict}" if edit.verdict != "keep" else "",
                  f"headline={edit.headline}" if edit.headline else "", f"text={edit.text}" if edit.text else "",
                  f"points={edit.points}" if edit.points else "",
                  f"followups={edit.followups}" if edit.followups else ""]
        lines.append(" ".join([f"#{edit.number}", *(f for f in fields if f)]))
    lines.append(f"note {decision.note}" if decision.note.strip() else "")
    lines.append(f"lede {' '.join(decision.lede.split())}" if decision.lede.strip() else "")
    lines.append(f"confirm {decision.confirm}" if decision.confirm.strip() else "")
    lines.append(f"first {decision.first}" if decision.first.strip() else "")
    lines.append(f"nobreak {decision.nobreak}" if decision.nobreak.strip() else "")
    lines += [f"accept {pair.strip()}" for pair in decision.accept.split(";") if pair.strip()]
    return "\n".join(line for line in lines if line)


def decision_summary(edition: Edition) -> Counter[str]:
    """Entries per review status."""
    return Counter(e.status.value for e in edition.entries)
