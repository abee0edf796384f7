"""The digest as Slack ``chat.postMessage`` payloads: a summary parent, then the entries as thread replies.

Payloads carry no ``channel``: the deliverer adds it. Every payload except the first carries
``THREAD_KEY: True``; the deliverer removes that key and posts the payload with ``thread_ts`` set to the
parent's ``ts``. All payloads set ``unfurl_links``/``unfurl_media`` to False (a digest is all links).

Escaping: untrusted text goes through :func:`renderers.escape.mrkdwn` (``& < >`` escaped, so no mention or
link can come from a PR; ``* ~ ` _`` replaced by look-alikes, so nothing restyles) inside mrkdwn text
objects sent with ``verbatim: true``; drafter prose through :func:`renderers.escape.mrkdwn_prose`, the same
but with its `` `code` `` spans kept as Slack code spans; headers are ``plain_text``. Links are only made for URLs
:func:`renderers.escape.pr_url` accepts, with labels we write (``#123``). Blocks are built with
``slack_sdk.models.blocks`` so the SDK checks text lengths; block counts are ours (≤ 50 per message).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from slack_sdk.errors import SlackObjectFormationError
from slack_sdk.models.blocks import (
    Block,
    ContextBlock,
    DividerBlock,
    HeaderBlock,
    MarkdownTextObject,
    PlainTextObject,
    SectionBlock,
)

from prdigest.connect.variants import Variant
from prdigest.kernel.i18n import messages
from prdigest.kernel.models import Edition
from renderers.escape import DEFAULT_LINK_HOSTS, mrkdwn, mrkdwn_prose, one_line, slack_plain, truncate
from renderers.impact import ImpactBlock, impact_block
from renderers.relation_lines import Connections, variant_connections
from renderers.relation_lines import words as connect_words
from renderers.shared import shared
from renderers.site.links import edition_url, link_strings, permalink, site_base
from renderers.view import EntryView, Group, action_required, counts, groups, meta, strings, subject, view, window

#: The key that marks a payload as a thread reply; the deliverer pops it and sets ``thread_ts``.
THREAD_KEY = "thread"
MAX_BLOCKS = 50
SECTION_MAX = 3000
HEADER_MAX = 150
#: Most thread replies per reader: at ~16 entries a reply, about 320 entries; a bigger week says how many
#: more are in the email (Slack allows about one post per second per channel; 20,000 PRs would take hours).
MAX_REPLIES = 20
#: Verdict markers, the same colours as the email's badges.
MARK = {"deep-read": "\U0001f7e2", "skim": "\U0001f7e1", "skip": "\u26aa"}


def _md(text: str) -> MarkdownTextObject:
    return MarkdownTextObject(text=text, verbatim=True)


def _header(text: str) -> HeaderBlock:
    return HeaderBlock(text=PlainTextObject(text=truncate(slack_plain(one_line(text)), HEADER_MAX), emoji=True))


def _entry_text(e: EntryView, ui: Mapping[str, Any], rationale: int, item: int, headline: int) -> str:
    # Drafter prose (and PR titles, in entry_meta): `code` spans become Slack code spans (mrkdwn_prose).
    lines = [f"*{mrkdwn_prose(truncate(e.headline, headline))}*"]
    lines += [f"_{mrkdwn(r)}_" for r in e.relations]  # reverts / follow-ups: before the why
    lines += [mrkdwn_prose(truncate("\n".join(e.rationale), rationale))] if e.rationale and rationale else []
    if e.facts:
        lines.append(f"*{ui['facts']}*")
        lines += [f"\u2022 {mrkdwn_prose(truncate(f, item))}" for f in e.facts]
    if e.focus:
        lines.append(f"*{ui['focus']}*")
        lines += [f"{i}. {mrkdwn_prose(truncate(f, item))}" for i, f in enumerate(e.focus, 1)]
    if e.followups:
        lines.append(f"*{ui['followups']}*")
        lines += [f"\u2022 {mrkdwn_prose(truncate(f, item))}" for f in e.followups]
    return "\n".join(lines)


def entry_text(e: EntryView, language: str) -> str:
    """The entry's section text, shortened until it fits Slack's 3,000 characters (after escaping)."""
    ui = strings(language)
    rationale, item, headline = 1500, 400, 200
    text = _entry_text(e, ui, rationale, item, headline)
    while len(text) > SECTION_MAX:
        # Escaping can grow text up to 5× ("&" → "&amp;"), so shrink the raw parts until it fits.
        rationale, item, headline = rationale // 2, max(item // 2, 20), max(headline // 2, 40)
        text = _entry_text(e, ui, rationale, item, headline)
    return text


def entry_meta(e: EntryView, language: str, link: str | None = None) -> str:
    """The context line: verdict, PR link (#number only; the title is text), author, size, subsystems, and
    the archive permalink when ``link`` is given (checked by ``site_base``: no ``|`` or ``>`` in it)."""
    ref = f"<{e.url}|#{e.number}>" if e.url else f"#{e.number}"
    # The permalink is appended after truncation, so it can never be cut in half.
    own = f" · <{link}|{mrkdwn(link_strings(language)['permalink'])}>" if link else ""
    return truncate(f"{MARK[e.verdict.value]} {mrkdwn(e.badge)} · {ref} {mrkdwn_prose(e.title)} · "
                    f"{mrkdwn(meta(e, language))}", SECTION_MAX - len(own)) + own


def entry_blocks(e: EntryView, language: str, link: str | None = None) -> list[dict[str, Any]]:
    """One entry as two blocks (section + context), validated by slack_sdk; made once per entry in a render
    step, however many variants show it (:mod:`renderers.shared`)."""
    return list(shared("slack-entry", (e,), (language, link), lambda: tuple(_entry_blocks(e, language, link))))


def _entry_blocks(e: EntryView, language: str, link: str | None) -> list[dict[str, Any]]:
    try:
        blocks: list[Block] = [SectionBlock(text=_md(entry_text(e, language))),
                               ContextBlock(elements=[_md(entry_meta(e, language, link))])]
        return [b.to_dict() for b in blocks]
    except SlackObjectFormationError:
        # Cannot happen with the caps above; if it ever does, the entry still appears, minimally.
        ref = f"<{e.url}|#{e.number}>" if e.url else f"#{e.number}"
        return [SectionBlock(text=_md(f"{ref} {mrkdwn(truncate(e.headline, 200))}")).to_dict()]


def _group_header(g: Group, ui: Mapping[str, Any], continued: bool, count: int | None = None) -> dict[str, Any]:
    """A verdict group's header block (made once per text in a render step, like an entry's blocks)."""
    n = len(g.entries) if count is None else count
    text = f"{MARK[g.verdict.value]} {g.label} · {n}" + (ui["continued"] if continued else "")
    return shared("slack-group-header", (), (text,), lambda: _header(text).to_dict())


def _divider() -> dict[str, Any]:
    """The divider between two entries (one block dictionary, shared like an entry's blocks)."""
    return shared("slack-divider", (), (), lambda: DividerBlock().to_dict())


def _payload(text: str, blocks: list[dict[str, Any]], thread: bool) -> dict[str, Any]:
    assert len(blocks) <= MAX_BLOCKS, f"{len(blocks)} blocks in one Slack message"
    payload: dict[str, Any] = {"text": text, "blocks": blocks, "unfurl_links": False, "unfurl_media": False}
    if thread:
        payload[THREAD_KEY] = True
    return payload


def action_blocks(views: list[EntryView], language: str) -> list[Block]:
    """The "Action required" section of the parent message: the variant's breaking entries (linked), each
    with its breaking facts; nothing when there is none. It comes before read first."""
    action = action_required(views)
    if not action:
        return []
    ui = strings(language)
    lines = [f"\U0001f6a8 *{mrkdwn(ui['action'])}* · {action.total}", mrkdwn(ui["action_note"])]
    for e in action.entries:
        ref = f"<{e.url}|#{e.number}>" if e.url else f"#{e.number}"
        lines.append(f"\u2022 {ref} {mrkdwn_prose(truncate(e.headline, 150))}")
        lines += [f"\u2003\u2013 {mrkdwn_prose(truncate(f, 200))}" for f in e.breaking_facts]
    if action.more:
        lines.append(mrkdwn(ui["action_more"].format(n=action.more)))
    return [SectionBlock(text=_md(truncate("\n".join(lines), SECTION_MAX)))]


def connect_blocks(c: Connections, language: str) -> list[Block]:
    """The lede, the read-first entries (linked), the stories (title and their entries' numbers and headlines)
    and the earlier follow-ups, for the parent message: at most four sections, each within Slack's limits."""
    w = connect_words(language)
    blocks: list[Block] = []
    if c.lede:
        blocks.append(SectionBlock(text=_md(truncate(mrkdwn(c.lede), SECTION_MAX))))
    if c.read_first:
        lines = [f"*{mrkdwn(w['first'])}*"]
        for i, f in enumerate(c.read_first, start=1):
            ref = f"<{f.url}|#{f.number}>" if f.url else f"#{f.number}"
            lines.append(f"{i}. {ref} {mrkdwn_prose(truncate(f.headline, 150))}")
        blocks.append(SectionBlock(text=_md(truncate("\n".join(lines), SECTION_MAX))))
    if c.stories:
        lines = [f"*{mrkdwn(w['stories'])}*"]
        for story in c.stories:
            lines.append(f"\u2022 *{mrkdwn(story.title)}*: " + ", ".join(f"#{n} {mrkdwn(truncate(h, 80))}"
                                                                      for n, h in story.entries))
        blocks.append(SectionBlock(text=_md(truncate("\n".join(lines), SECTION_MAX))))
    if c.done or c.open_count:
        lines = [f"*{mrkdwn(w['earlier'])}*", *(mrkdwn_prose(d) for d in c.done)]  # follow-ups keep `code`
        if c.open_count:
            lines += [mrkdwn(w["open"].format(n=c.open_count)), *(f"\u2022 {mrkdwn_prose(o)}" for o in c.open)]
        blocks.append(SectionBlock(text=_md(truncate("\n".join(lines), SECTION_MAX))))
    return blocks


#: Severity markers of "Affects your code".
IMPACT_MARK = {"breaks": "\U0001f534", "check": "\U0001f7e1"}


def impact_blocks(block: ImpactBlock | None) -> list[Block]:
    """"Affects your code" for the parent message: a header and one section per upstream PR (at most 10, each
    within Slack's limits), or the one line that says nothing touches the downstream this week."""
    if block is None:
        return []
    blocks: list[Block] = [SectionBlock(text=_md(f"*{mrkdwn(block.title)}*"))]
    if not block.prs:
        blocks[0] = SectionBlock(text=_md(f"*{mrkdwn(block.title)}*\n{mrkdwn(block.none)}"))
        return blocks
    for pr in block.prs[:10]:
        ref = f"<{pr.url}|#{pr.number}>" if pr.url else f"#{pr.number}"
        lines = [f"{IMPACT_MARK[pr.severity]} *{mrkdwn(block.severity_words[pr.severity])}* · {ref} "
                 f"{mrkdwn_prose(truncate(pr.headline, 150))}"]
        lines += [f"\u2022 {mrkdwn_prose(line)}" for line in pr.lines]
        lines += [f"\u2022 {mrkdwn(pr.more)}"] if pr.more else []
        lines.append(f"_{mrkdwn(pr.todo + (' ' + block.partial_note if pr.partial else ''))}_")
        blocks.append(SectionBlock(text=_md(truncate("\n".join(lines), SECTION_MAX))))
    return blocks


def parent(edition: Edition, variant: Variant, base: str | None = None,
           link_hosts: tuple[str, ...] = DEFAULT_LINK_HOSTS) -> dict[str, Any]:
    """The channel message: repo, week, counts per verdict, the variant's filter; entries follow in thread.
    With the archive's ``base`` URL it links the edition's page."""
    lang = edition.language
    ui = strings(lang)
    tally = "\u2003".join(f"{MARK[v.value]} {mrkdwn(v.label(lang))} *{n}*"
                          for v, n in counts(variant.entries).items() if n)
    blocks: list[Block] = [
        _header(f"{ui['digest']} · {one_line(edition.repo)} · {edition.week}"),
        SectionBlock(text=_md(f"*{mrkdwn(ui['total'].format(total=len(variant.entries)))}*\n{tally}")),
        ContextBlock(elements=[_md(mrkdwn(f"{window(edition)} · {one_line(variant.filter.describe(lang))}")),
                               _md(mrkdwn(ui["thread"]))]),
    ]
    blocks += impact_blocks(impact_block(edition, variant.entries, variant.filter.downstream, link_hosts))
    blocks += action_blocks([view(e, lang, link_hosts, variant.vocabulary, edition.repo)
                             for e in variant.entries if e.action], lang)
    blocks += connect_blocks(variant_connections(edition, variant, link_hosts), lang)
    if base:
        online = f"<{edition_url(base, edition)}|{mrkdwn(link_strings(lang)['view_online'])}>"
        blocks.append(ContextBlock(elements=[_md(online)]))
    return _payload(mrkdwn(subject(edition, variant)), [b.to_dict() for b in blocks], thread=False)


def render_slack(edition: Edition, variant: Variant, *, link_hosts: tuple[str, ...] = DEFAULT_LINK_HOSTS,
                 site_url: str | None = None) -> list[dict[str, Any]]:
    """The payloads for ``variant``: the parent first, then replies (``THREAD_KEY``) of ≤ 50 blocks each.

    Replies hold the entries grouped by verdict in the variant's order: a header per group (repeated as
    "continued" when a group spans messages), then per entry a section and a context line, divided.
    ``site_url`` (the archive) adds a link to the edition's page and a permalink per entry.
    """
    base = site_base(site_url)
    lang = edition.language
    ui = strings(lang)
    # Only the entries the capped thread can hold are viewed (each takes at least 3 blocks).
    limit = MAX_REPLIES * (MAX_BLOCKS // 3) + 1
    views = [view(e, lang, link_hosts, variant.vocabulary, edition.repo) for e in variant.entries[:limit]]
    total = len(variant.entries)
    per_verdict = counts(variant.entries)
    name = f"{one_line(edition.repo)} {edition.week}"

    replies: list[tuple[list[dict[str, Any]], int, int]] = []  # blocks, first and last entry index
    cur: list[dict[str, Any]] = []
    cur_group: Group | None = None
    first = index = 0
    for g in groups(views, lang):
        started = False
        for e in g.entries:
            body = entry_blocks(e, lang, permalink(base, edition, e.number) if base else None)
            lead = [_divider()] if cur and cur_group is g else [_group_header(g, ui, started, per_verdict[g.verdict])]
            if len(cur) + len(lead) + len(body) > MAX_BLOCKS:
                replies.append((cur, first, index))
                cur, first = [], index
                lead = [_group_header(g, ui, started, per_verdict[g.verdict])]
                if len(replies) == MAX_REPLIES:
                    break  # the rest is in the email: a channel is not flooded with thousands of posts
            cur += lead + body
            cur_group, started, index = g, True, index + 1
        if len(replies) == MAX_REPLIES:
            cur = []
            break
    if cur:
        replies.append((cur, first, index))

    payloads = [parent(edition, variant, base, link_hosts)]
    for blocks, lo, hi in replies:
        fallback = f"{name} · " + ui["entries_range"].format(first=lo + 1, last=hi, total=total)
        payloads.append(_payload(mrkdwn(fallback), blocks, thread=True))
    if index < total:
        payloads.append(_more(edition, total - index, total, base))
    return payloads


def _more(edition: Edition, more: int, total: int, base: str | None) -> dict[str, Any]:
    """The last reply of a capped thread: how many entries are only in the email (and the archive)."""
    text = messages(edition.language, "slack")["more"].format(more=f"{more:,}", total=f"{total:,}")
    blocks: list[Block] = [SectionBlock(text=_md(f"*{mrkdwn(text)}*"))]
    if base:
        label = mrkdwn(link_strings(edition.language)["view_online"])
        blocks.append(ContextBlock(elements=[_md(f"<{edition_url(base, edition)}|{label}>")]))
    return _payload(mrkdwn(text), [b.to_dict() for b in blocks], thread=True)
