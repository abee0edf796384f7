"""Untrusted text made safe for Feishu/Lark card markdown (``lark_md`` and the ``markdown`` element).

Card markdown is Markdown plus Feishu's own tags: ``<at id=all></at>`` / ``<at user_id="all">`` (mention
everyone), ``<at id=ou_…>``, ``<font color=…>``, ``<link …>``, ``<text_tag>``, and ``:EMOJI:`` short codes.
Feishu's card documentation gives HTML numeric character references (``&#60;`` for ``<``, ``&#42;`` for
``*``, …) as the way to show such characters literally (not checked against a live Feishu: no internet
here), so every character that can open a tag, a link, an image, emphasis, code, an entity or a short code
becomes one (an underscore inside a word cannot, and stays); ``@`` does too, so no text from a PR reads as
a mention even to a client that linkified bare ``@names``. At a line start, ``#``, ``-``, ``+``, ``=`` and
an ordered-list ``1.`` would make a heading, a list or a rule: they are referenced there as well.

Drafter prose keeps its Markdown code spans (`` `x` ``) as real code spans when the span holds nothing a
tag or an entity needs (``<``, ``>``, ``&``): inside a span Markdown formats nothing, and a span cannot
contain a backtick or a line break, so it can neither close early nor run on. A span with ``<``, ``>``
or ``&`` is shown as escaped text instead (whether the card renderer decodes references inside code is
not documented, and a tag must never be parsed).
"""

from __future__ import annotations

import re

from prdigest.kernel.text import clean, code_spans, one_line

#: Characters referenced everywhere in untrusted text (``(`` ``)`` ``!`` are harmless once ``[`` ``]`` are).
_ALWAYS = re.compile(r"[&<>*~`\[\]\\:|@]|(?<![^\W_])_|_(?![^\W_])")
#: At the start of a line (after spaces): headings, lists, setext rules.
_LINE_START = re.compile(r"^([ \t]*)([#\-+=])", re.MULTILINE)
#: ``12.`` / ``12)`` at a line start would start an ordered list (``)`` is already referenced).
_ORDERED = re.compile(r"^([ \t]*\d{1,9})\.", re.MULTILINE)


def _ref(ch: str) -> str:
    return f"&#{ord(ch)};"


def lark_md(text: object) -> str:
    """:func:`renderers.escape.clean` text safe inside card markdown: shown as written, never parsed."""
    # An underscore between two letters or digits (``hf_text_config``) cannot emphasise: it stays as written.
    s = _ALWAYS.sub(lambda m: _ref(m.group()), clean(text))
    s = _LINE_START.sub(lambda m: m.group(1) + _ref(m.group(2)), s)
    return _ORDERED.sub(lambda m: m.group(1) + _ref("."), s)


def lark_md_prose(text: object) -> str:
    """:func:`lark_md` for drafter prose, with its code spans kept as card code spans where that is safe."""
    out = []
    for piece, code in code_spans(clean(text)):
        if code and not any(c in piece for c in "<>&"):
            out.append(f"`{piece}`")
        else:  # a span holding < > & is shown as written, backticks included
            out.append(lark_md(f"`{piece}`" if code else piece))
    return "".join(out)


def plain(text: object) -> str:
    """:func:`clean` text on one line for a ``plain_text`` element (card headers): never parsed."""
    return one_line(text)
