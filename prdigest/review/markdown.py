"""The draft digest as the editor reads it above the review form (and in ``digest review``), as markdown.

Every text from a PR or the drafter is untrusted: :func:`md` makes it inert inline markdown (code spans kept
as code), and only http(s) URLs on an allowed link host become links; others are defanged.
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import datetime

from prdigest.connect.lede import check_lede
from prdigest.connect.relations import relation_lines
from prdigest.kernel.factlines import breaking_lines, fact_lines
from prdigest.kernel.links import DEFAULT_LINK_HOSTS, defang, is_allowed
from prdigest.kernel.models import Edition, Entry, EntryStatus, Impact, Verdict
from prdigest.kernel.text import clean, code_spans

_MD_SPECIAL = re.compile(r"([\\*_\[\]<>|~`])")
_MD_LINE_START = re.compile(r"^(\d*)([#+=>.)-])")


def _escaped(text: str) -> str:
    return _MD_SPECIAL.sub(r"\\\1", text)


def md(text: str, limit: int | None = None, hosts: tuple[str, ...] = DEFAULT_LINK_HOSTS) -> str:
    """Untrusted text (PR titles, LLM output) as inert inline markdown: one line, markup characters escaped
    outside code spans (no tag, link, image, emphasis or table cell can come from a PR), list/heading starts
    defused, control characters dropped, URLs off ``hosts`` defanged (the UI would auto-link them)."""
    text = re.sub(r"\s+", " ", defang(clean(text), hosts)).strip()
    if limit and len(text) > limit:
        text = text[: limit - 1] + "…"
    # A code span's content is literal (no tag, link, image or emphasis): kept as written, since escaping it
    # would show "\_"; every medium reads the same spans (prdigest.kernel.text.CODE_SPAN).
    out = [f"`{piece}`" if code else _escaped(piece) for piece, code in code_spans(text)]
    return _MD_LINE_START.sub(r"\1\\\2", "".join(out))


def code(text: str, limit: int | None = None) -> str:
    """Untrusted text as one inline code span, literal as written: ``quantization_no-docs``, not
    ``quantization\\_no-docs`` (markdown shows a code span's backslashes); a backtick inside becomes a
    look-alike, so the span cannot close early."""
    text = re.sub(r"\s+", " ", clean(text)).strip().replace("`", "\u02cb")
    if limit and len(text) > limit:
        text = text[: limit - 1] + "…"
    return f"`{text}`" if text else ""


def _link(url: str, text: str = "") -> str:
    # Only http(s) URLs on an allowed link host become links; anything else is shown as (defanged) text.
    if not (is_allowed(url) and re.fullmatch(r"https?://[^\s<>()\[\]]+", url)):
        return md(f"{text} {url}".strip())
    return f"[{text}]({url})" if text else f"<{url}>"


#: Above this many characters the form's description lists entries one line each (the full draft goes to
#: the markdown artifact): the V2 UI re-renders the description on every keystroke in the form, and a
#: 113,000-character description for 150 entries made each keystroke take ~0.6 s (benchmarks/review_page.py).
FULL_DESCRIPTION_BUDGET = 12_000


def review_markdown(edition: Edition, *, deadline: datetime | None = None, run_hint: str = "",
                    budget: int | None = FULL_DESCRIPTION_BUDGET, artifact_hint: str = "",
                    notes: list[str] | None = None) -> str:
    """The draft digest as the editor reads it above the form: a two-line head, read-first and the lede, the
    flagged entries, then every other entry by verdict, then the counts. The entries come first because the
    classic Prefect UI may
    give the whole text only a few hundred pixels of a scrolling box.

    With ``budget`` and an edition whose full text exceeds it, the unflagged entries are listed one line each
    (number, headline, subsystems, link) and only the flagged entries (up to 10) keep their full text.
    ``notes``: markdown lines shown under the head, already escaped (the subsystems proposed for a repo
    without a rules file).
    """
    flagged = [e for e in edition.entries if e.flagged]
    others = [e for e in edition.entries if not e.flagged]
    head = [f"## {md(edition.name)}: {len(edition.entries)} draft entries"
            + (f", {len(flagged)} flagged ⚠ first" if flagged else "")]
    if artifact_hint:
        head += ["", artifact_hint]
    head += notes or []
    how = [
        "", "### How to send",
        "", "Choose *send* under Decision, check your name, then Resume (classic UI: Submit). Every unflagged "
        "entry goes out unless you add a line `reject 41873 41902` under *Changes*"
        + ("; a flagged ⚠ entry goes out only if you add `approve 41910`, edit it, or choose *send, flagged too*"
           if flagged else "")
        + ". To edit an entry: `#41873 verdict=skim headline=… text=… points=… | … followups=…` "
          "(kept for later drafts of the PR). *hold* sends nothing.",
    ]
    head += impact_markdown(edition)
    head += action_markdown(edition)
    head += connections_markdown(edition)
    tail = [*how, "", "### Counts"]
    if deadline is not None:
        tail += ["", f"Waiting until **{deadline:%Y-%m-%d %H:%M} UTC**. After that the run fails and "
                     "nothing is sent."]
    if run_hint:
        tail += ["", run_hint]
    per_verdict = Counter(e.verdict.value for e in edition.entries)
    per_subsystem = Counter(s for e in edition.entries for s in e.subsystems)
    tail += ["", "| verdict | entries |", "| --- | ---: |"]
    tail += [f"| {v.value} | {per_verdict.get(v.value, 0)} |" for v in Verdict]
    tail += ["", "**Subsystems:** " + (", ".join(f"{md(s)} {n}" for s, n in per_subsystem.most_common()) or "none")]
    drafters = Counter(e.drafter for e in edition.entries)
    cost = f", estimated cost ${edition.cost_usd:.2f}" if edition.cost_usd else ""
    tail += ["", f"**Drafted by:** {', '.join(f'{md(d)} {n}' for d, n in drafters.most_common())}; "
                 f"tokens in {edition.tokens_in}, out {edition.tokens_out}{cost}"]
    full = list(head)
    # A week whose entries cannot fit even at 80 characters each is not written out in full first.
    fits = budget is None or len(edition.entries) * 80 <= budget
    if flagged and fits:
        full += ["", f"### ⚠ Needs your eye ({len(flagged)}): not sent unless you approve them"]
        for entry in flagged:
            full += ["", *entry_markdown(entry)]
    for verdict in Verdict if fits else ():
        group = [e for e in others if e.verdict is verdict]
        if group:
            full += ["", f"### {verdict.value} ({len(group)})"]
            for entry in group:
                full += ["", *entry_markdown(entry)]
    text = "\n".join(full + tail) + "\n"
    if fits and (budget is None or len(text) <= budget):
        return text
    compact = list(head)
    if flagged:
        compact += ["", f"### ⚠ Needs your eye ({len(flagged)}): not sent unless you approve them"]
        for entry in flagged[:10]:
            compact += ["", *entry_markdown(entry)]
        compact += ["", *(_line(e) for e in flagged[10:])]
    compact += ["", f"### The other {len(others)} entries, one line each" if flagged
                else f"### All {len(others)} entries, one line each"]
    for verdict in Verdict:
        group = [e for e in others if e.verdict is verdict]
        if group:
            compact += ["", f"**{verdict.value} ({len(group)})**", ""]
            compact += [_line(e) for e in group]
    return _bounded(compact, len(edition.entries), artifact_hint) + "\n".join(tail) + "\n"


#: Longest description, in characters: the form's run input stays bounded however big the week (20,000
#: entries one line each would be ~3 MB); past it, the draft artifact has every entry.
MAX_DESCRIPTION = 100_000


def _bounded(lines: list[str], total: int, artifact_hint: str) -> str:
    """``lines`` joined, cut at :data:`MAX_DESCRIPTION` characters with a line saying how many entries
    are left out and where to read them."""
    size = 0
    for i, line in enumerate(lines):
        size += len(line) + 1
        if size > MAX_DESCRIPTION:
            more = sum(1 for rest in lines[i:] if rest.startswith("- "))
            where = artifact_hint or "the run's draft artifact"
            return "\n".join([*lines[:i], "", f"**… and {more:,} more of {total:,} entries, not listed here:** "
                                                f"read them in {where}.", ""])
    return "\n".join(lines) + "\n"


#: How many of the ranking's entries the review lists under "Read first" (a reader of everything's budget).
REVIEW_FIRST = 5


def read_first_markdown(edition: Edition) -> list[str]:
    """Read-first as the editor reviews it: the ranking's first entries (what a reader of everything reads
    first), then each variant's, and how to reorder it with a ``first …`` line."""
    entries = {e.number: e for e in edition.entries}
    top = [entries[n] for n in edition.ranking if n in entries][:REVIEW_FIRST]
    if not top:
        return []
    lines = ["", f"### Read first ({len(top)} of {len(edition.ranking)} ranked)", ""]
    lines += [f"{i}. {_link(e.url, f'#{e.number}')} {md(e.headline, 160)} · *{e.verdict.value}*"
              f"{' ⚠' if e.flagged else ''}" for i, e in enumerate(top, start=1)]
    narrow = [v for v in edition.variants if v.read_first and v.read_first != [e.number for e in top]]
    if narrow:
        lines += [""] + [f"- {code(v.key, 80)} ({md(', '.join(v.readers), 120)}): "
                         + " ".join(f"#{n}" for n in v.read_first) for v in narrow[:20]]
    lines += ["", "To change the order, add a line `first 41873 41902` under *Changes*: those entries go first, "
                  "in that order, for every reader who gets them."]
    return lines


#: How many breaking entries the review lists under "Action required" (the others are counted).
REVIEW_ACTION = 20


def action_markdown(edition: Edition) -> list[str]:
    """The entries marked breaking (each variant opens with them as "Action required"), their breaking facts,
    and how to clear a mark the editor disagrees with (``nobreak …``)."""
    marked = [e for e in edition.entries if e.breaking or e.action]
    if not marked:
        return []
    lines = ["", f"### Action required ({len(marked)}): what readers are told to do", ""]
    for e in marked[:REVIEW_ACTION]:
        facts = "; ".join(md(line, 200) for line in (e.action or breaking_lines(e.changes, "en")))
        lines.append(f"- {_link(e.url, f'#{e.number}')} {md(e.headline, 160)}" + (f": {facts}" if facts else ""))
    if len(marked) > REVIEW_ACTION:  # the form's description stays short: the entries below say "breaking"
        lines.append(f"- … and {len(marked) - REVIEW_ACTION} more, each marked **breaking** with its facts below")
    lines += ["", "To clear a mark, add a line `nobreak 41873` under *Changes*: the entry stays, without the "
                  "Action required block."]
    return lines


#: Downstream lines the review lists per upstream PR (the record has them all).
REVIEW_IMPACT_LINES = 8


def impact_markdown(edition: Edition) -> list[str]:
    """What the edition's PRs do to the readers' own repositories (their downstreams), first: each PR with
    the downstream lines it touches, breaks before check. Those PRs reach the downstream's readers whatever
    their subsystem; rejecting one keeps it from them too."""
    by_downstream: dict[str, dict[int, list[Impact]]] = {}
    for entry in edition.entries:
        for impact in entry.impact:
            by_downstream.setdefault(impact.downstream, {}).setdefault(entry.number, []).append(impact)
    if not by_downstream:
        return []
    entries = {e.number: e for e in edition.entries}
    lines: list[str] = []
    for name, prs in sorted(by_downstream.items()):
        breaking = sum(1 for impacts in prs.values() if any(i.severity == "breaks" for i in impacts))
        lines += ["", f"### Affects downstream {md(name, 40)} ({breaking} break, {len(prs) - breaking} to check)", ""]
        for number in sorted(prs, key=lambda n: (all(i.severity != "breaks" for i in prs[n]), n)):
            impacts = sorted(prs[number], key=lambda i: (i.severity != "breaks", i.path, i.line))
            entry = entries[number]
            partial = " (from patches: partial)" if any(i.partial for i in impacts) else ""
            lines.append(f"- {_link(entry.url, f'#{number}')} {md(entry.headline, 160)} · "
                         f"**{impacts[0].severity}**{partial}")
            for i in impacts[:REVIEW_IMPACT_LINES]:
                lines.append(f"  - `{(i.path + ':' + str(i.line)).replace('`', '')[:200]}` {i.how} "
                             f"`{i.symbol.replace('`', '')[:160]}`: {md(i.fact, 200)} ({i.severity})")
            if len(impacts) > REVIEW_IMPACT_LINES:
                lines.append(f"  - … and {len(impacts) - REVIEW_IMPACT_LINES} more")
    lines += ["", "Not a break for that team? Add a line `accept SYMBOL PATH` under *Changes* (e.g. `accept "
                  "FusedMoE.forward vllm_ascend/ops/fused_moe.py`): it is left out, now and in later editions and "
                  "alerts, until that symbol changes again."]
    return lines


def connections_markdown(edition: Edition) -> list[str]:
    """Read-first (reorder it with a ``first …`` line), the lede (rewrite it with a ``lede …`` line) and the
    earlier follow-ups, the semantic match's proposals numbered for ``confirm N`` (a proposal is never done
    until the editor confirms it)."""
    lines: list[str] = read_first_markdown(edition)
    if edition.lede:
        lines += ["", "### Lede", "", md(edition.lede, 1200), "",
                  "To rewrite it, add a line `lede Your two to four sentences` under *Changes*."]
    lines += variant_ledes_markdown(edition)
    items = edition.earlier_followups
    if items:
        done = sum(1 for i in items if i.status == "done")
        lines += ["", f"### Earlier follow-ups ({done} done, {len(items) - done} open)", ""]
        for n, i in enumerate(items, start=1):
            where = f"#{i.from_number} ({md(i.from_edition)}): {md(i.text, 200)}"
            if i.status == "done":
                lines.append(f"- done by #{i.by_number}: {where}")
            elif i.proposed_by is not None:
                lines.append(f"- **proposed** done by #{i.proposed_by}: {where}. Confirm with `confirm {n}`")
        shown_open = sum(1 for i in items if i.status == "open" and i.proposed_by is None)
        if shown_open:
            lines.append(f"- {shown_open} still open")
    return lines


#: The most readers' ledes the review lists in full (a week with many reader filters has as many ledes).
REVIEW_LEDES = 12


def variant_ledes_markdown(edition: Edition) -> list[str]:
    """The ledes drafted for readers who get part of the edition, with who gets each: they are sent too, so the
    editor reads them. Each is checked again after the decision and written offline if it no longer passes."""
    live = {e.number: e for e in edition.entries if e.status is not EntryStatus.REJECTED}
    own = [v for v in edition.variants if v.lede and v.lede != edition.lede]
    if not own:
        return []
    lines = ["", f"### Readers' ledes ({len(own)})", "",
             "Each opens the message of the readers named; after your decision, one that cites, links or names a "
             "rejected PR (or no longer passes the lede checks) is written again offline."]
    for variant in own[:REVIEW_LEDES]:
        entries = [live[n] for n in variant.numbers if n in live]
        problems = check_lede(variant.lede, edition, entries)
        readers = ", ".join(variant.readers[:5]) + (f" +{len(variant.readers) - 5}" if len(variant.readers) > 5 else "")
        lines.append(f"- {md(readers, 160)}: {md(variant.lede, 1200)}"
                     + (f" ⚠ {md('; '.join(problems), 300)}" if problems else ""))
    if len(own) > REVIEW_LEDES:
        lines.append(f"- … and {len(own) - REVIEW_LEDES} more")
    return lines


def _line(entry: Entry) -> str:
    return (f"- {_link(entry.url, f'#{entry.number}')} {md(entry.headline, 160)} · {md(', '.join(entry.subsystems))}"
            f"{' ⚠' if entry.flagged else ''}")


def entry_markdown(entry: Entry) -> list[str]:
    """One entry as markdown lines: headline, PR facts, why, focus points, follow-ups, warnings."""
    mark = " ⚠" if entry.flagged else ""
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
    if entry.changes:
        mark = " (**breaking**: clear with `nobreak " + str(entry.number) + "`)" if entry.breaking else ""
        lines += ["", f"Code facts{mark}:", *[f"- {md(line, 300)}" for line in fact_lines(entry.changes, "en")]]
    if entry.relations:
        lines += ["", *[f"- {md(line)}" for line in relation_lines(entry.relations, "en")]]
    if entry.coverage is not None:
        lines += ["", f"*The drafter saw:* {md(entry.coverage.summary('en'), 300)}"]
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
