"""The calibration's features of a PR's own words: its title's tags, normalised (``[BugFix]``, ``[Bug Fix]`` and
``[bugfix]`` are one ``tag:bugfix``), and the words of its title and of its description (the repository's PR
template, code blocks and quoted logs removed), each hashed into a fixed number of buckets.

A team's taste is partly in how its PRs are titled and explained: a ``[Refactor]`` or an RFC is studied, a
``[CI]`` or a ``[v0.9.1]`` port is skipped. Words are many and each is rare, so they are weighed far more cautiously
than the other features (:func:`penalty`, given to :func:`prdigest.draft.calibration.fit`: the fit pulls them back
much harder), and hashed so a calibration would hold bucket numbers, never a PR's words. They are not in the shipped
feature set (:func:`prdigest.draft.calibration.features`): measured leave-one-week-out over fourteen labelled
vllm-ascend weeks (``benchmarks.calibration_variants``), the description's words lowered agreement and deep-read F1
and the title's changed neither (BENCHMARKS.md, *Learned verdict*). The text is untrusted: it is bounded before anything
reads it, and only ASCII letters and digits become words, so control characters, lone surrogates and other
scripts are never a word.
"""

from __future__ import annotations

import re
import zlib

from prdigest.kernel.prtext.prose import strip_template
from prdigest.kernel.text import clean

#: Feature-name prefixes of this module, and how much harder than the other features the fit pulls their weights
#: back (a multiple of its strength): a word seen in a handful of PRs must not move a verdict on its own.
PENALTY = {"tw:": 10.0, "bw:": 10.0}
#: Hash buckets for words: enough that few words share one on a repo's vocabulary, few enough to keep the model small.
BUCKETS = 4096
#: Only this much of a description is read (a description that matters fits; logs pasted below do not).
MAX_BODY = 8_000
#: At most this many distinct words of a description count (its first ones: the summary comes first).
MAX_BODY_WORDS = 120
_TAG = re.compile(r"\[([^\[\]]{1,40})\]")
_WORD = re.compile(r"[a-z][a-z0-9]{1,24}")
_FENCE = re.compile(r"```.*?(?:```|$)", re.DOTALL)
#: Lines a squash merge or the template adds to every description: trailers, version stamps, bare links.
_TRAILER = re.compile(r"^(?:[-*]\s*)?(?:signed-off-by|co-authored-by|vllm version|vllm main|cherry[- ]picked|"
                      r"https?://\S+$)", re.IGNORECASE)
_VERSION = re.compile(r"^(?:v|releases?/?v?)?\d+(?:\.\d+)+(?:[-.]?(?:rc\d*|dev|post\d*))*$")
#: Spellings of one tag (after lower-casing and dropping everything but letters and digits).
_SYNONYMS = {"feature": "feat", "features": "feat", "bug": "bugfix", "fix": "bugfix", "bugfixes": "bugfix",
             "hotfix": "bugfix", "docs": "doc", "documentation": "doc", "performance": "perf", "tests": "test",
             "ut": "test", "e2e": "test", "unittest": "test", "kernels": "kernel", "op": "ops",
             "refactoring": "refactor", "build": "ci", "cicd": "ci", "model": "models", "quant": "quantization",
             "dep": "deps", "dependency": "deps", "dependencies": "deps", "mainline": "main", "chore": "misc"}
#: Words too common to say anything (English function words and the template's leftovers).
_STOP = frozenset("""the and for with this that from into are was were will can not but has have had its it is be
to of in on at by as an or if we our you your pr prs when which what why how does do done also all any more than then
there their them they use used using add adds added none yes no na""".split())


def tag(raw: str) -> str:
    """One title tag normalised: lower case, letters and digits only, its usual spellings one name; a version or a
    release branch (``v0.9.1-dev``, ``releases/v0.11.0``) is ``version``."""
    low = " ".join(raw.lower().split())
    if _VERSION.match(low.replace(" ", "")):
        return "version"
    key = re.sub(r"[^a-z0-9]+", "", low)[:24]
    return _SYNONYMS.get(key, key)


def _bucket(prefix: str, word: str) -> str:
    # crc32, not hash(): the same word must land in the same bucket in every process that applies a calibration.
    return f"{prefix}{zlib.crc32(word.encode('utf-8', 'replace')) % BUCKETS}"


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP]


def title_features(title: str) -> set[str]:
    """The title's normalised tags (``tag:…``) and its hashed words and word pairs (``tw:…``), tags left out."""
    text = clean(title[:400])
    out = {f"tag:{t}" for t in (tag(raw) for raw in _TAG.findall(text)[:4]) if t}
    words = _words(_TAG.sub(" ", text))
    out.update(_bucket("tw:", w) for w in words)
    out.update(_bucket("tw:", f"{a} {b}") for a, b in zip(words, words[1:]))
    return out


def body_features(body: str) -> set[str]:
    """The description's hashed words (``bw:…``): its first :data:`MAX_BODY_WORDS` distinct words, without the PR
    template, code blocks, links and quoted lines."""
    text = _FENCE.sub(" ", strip_template(clean(body[:MAX_BODY])))
    seen: dict[str, None] = {}
    for line in text.splitlines():
        line = line.strip()
        if line.startswith((">", "|")) or _TRAILER.match(line):
            continue  # quoted logs, tables of figures, trailers: not the author's words
        for word in _words(re.sub(r"https?://\S+", " ", line)):
            seen.setdefault(word, None)
            if len(seen) >= MAX_BODY_WORDS:
                return {_bucket("bw:", w) for w in seen}
    return {_bucket("bw:", w) for w in seen}


def text_features(title: str, body: str) -> set[str]:
    """All of this module's features of a PR's title and description."""
    return title_features(title) | body_features(body)


def penalty(name: str) -> float:
    """How many times the fit's strength pulls the weights of feature ``name`` back (1 for every other feature)."""
    return next((scale for prefix, scale in PENALTY.items() if name.startswith(prefix)), 1.0)
