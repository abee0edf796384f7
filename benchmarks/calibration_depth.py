"""The calibration's features of what a deep read is made of: how much new code of the package's own a PR brings
(new source files and their lines, new classes and functions, new kernels: not its total churn, which big
mechanical moves and test suites inflate), what it does to what users see (new public names, changed defaults,
pins), and how much the description explains (explanation sections such as a root cause or a design, an RFC, the
prose written beyond the repository's PR template).

Read from the PR's files (their status and added lines), its code facts (prdigest/collect/facts/) and its body;
each is a binary feature (a bucket of a count, never a PR's name). They are not in the shipped feature set
(:func:`prdigest.draft.calibration.features`): measured leave-one-week-out over ten labelled vllm-ascend weeks
they lowered verdict agreement with the product's fit (BENCHMARKS.md, *Learned verdict*);
``benchmarks.learned_verdict --depth`` adds them to measure them again.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from prdigest.kernel.models import Change, FileChange, PullRequest
from prdigest.kernel.prtext.files import SOURCE, file_kind
from prdigest.kernel.prtext.pointing import is_code
from prdigest.kernel.prtext.prose import strip_template
from prdigest.kernel.text import clean

#: Folders of a tree that hold no code of the package itself, whatever ``file_kind`` says of a file in them.
_NOT_PACKAGE = re.compile(r"(^|/)(tests?|docs?|examples?|benchmarks?|tools|scripts|\.github|ci)(/|$)")
#: Where compiled kernels and operators live in any repository's usual layout.
_KERNEL_PATH = re.compile(r"(^|/)(csrc|kernels?|ops|op_kernel|op_host|ascendc|triton)(/|$)")
_KERNEL_SUFFIX = (".cu", ".cuh", ".cpp", ".cc", ".h", ".hpp", ".c")
#: An explanation the author wrote under a heading or a bold label of its own: a template's headings are
#: questions put to the author ("What this PR does / why we need it?") and are not counted.
_EXPLAINS = re.compile(r"^\s*(?:#{1,6}\s*|\*\*|__)?\s*(?:\d+[.)]\s*)?(root[ -]?cause|cause|motivation|background|"
                       r"design|problem|analysis|solution|approach|rationale|overview|how it works|"
                       r"implementation|why)\b", re.IGNORECASE)
_RFC = re.compile(r"\bRFC\b|design doc", re.IGNORECASE)
#: Lines a squash merge or a template adds to every description: trailers, version stamps, bare links, rules.
_BOILERPLATE = re.compile(r"^\s*(?:[-*]\s*)?(?:signed-off-by|co-authored-by|vllm version|vllm main|closes|fixes|"
                          r"related|https?://\S+$|-{3,}|={3,})", re.IGNORECASE)
_FENCE = re.compile(r"^\s*(```|~~~)")
#: A signature's default moving between two literals (``enable=False→True``, ``size=16→32``): behaviour that changes
#: for every caller who relied on it (``x=[]→None`` and ``x=required→None`` are hygiene, not a new behaviour).
_LITERAL = r"(?:True|False|-?\d[\w.]*|'[^',]*'|\"[^\",]*\")"
_DEFAULT_CHANGE = re.compile(rf"\w={_LITERAL}→{_LITERAL}")

_LINES = ((0, "0"), (50, "1-50"), (200, "51-200"), (600, "201-600"))
_COUNT = ((0, "0"), (1, "1"), (3, "2-3"))
_SYMBOLS = ((0, "0"), (3, "1-3"), (10, "4-10"))
_PROSE = ((150, "<150"), (600, "150-600"), (1500, "600-1500"))


def _bucket(value: int, edges: Sequence[tuple[int, str]], last: str) -> str:
    return next((name for edge, name in edges if value <= edge), last)


def package_source(path: str) -> bool:
    """A file of the package's own code: code by its extension, not a test, doc, example, CI or tool."""
    return file_kind(path) == SOURCE and is_code(path) and not _NOT_PACKAGE.search(path.lower())


def _is_kernel(f: FileChange) -> bool:
    low = f.path.lower()
    return bool(_KERNEL_PATH.search(low)) and (low.endswith(_KERNEL_SUFFIX) or "triton" in low)


def _symbol_kind(c: Change) -> str:
    """``class``, ``function`` or ``value`` for an ``added`` fact, from the shape it records."""
    if c.after.startswith("="):
        return "value"
    last = c.symbol.rsplit(".", 1)[-1]
    if c.after.startswith("(") and not c.after.startswith("(self") and last[:1].isupper() and "." not in c.symbol:
        return "class"  # ``(Base)``: the bases of a class
    if not c.after and last[:1].isupper() and not last.isupper():
        return "class"
    return "function" if c.after.startswith("(") or not c.after else "value"


def code_features(pr: PullRequest) -> set[str]:
    """How much new code of its own the package gains, and what users see change (new public names, defaults)."""
    src = [f for f in pr.files if package_source(f.path)]
    new = [f for f in src if f.status == "added"]
    new_lines = sum(f.additions for f in new)
    out = {f"newsrc:{_bucket(new_lines, _LINES, '600+')}", f"newfiles:{_bucket(len(new), _COUNT, '4+')}",
           f"srcadd:{_bucket(sum(f.additions for f in src), _LINES, '600+')}"}
    if any(_is_kernel(f) for f in new) or any(c.kind == "kernel" and c.after and not c.before for c in pr.changes):
        out.add("newkernel")
    elif any(_is_kernel(f) for f in src):
        out.add("kernel-touched")
    added = [c for c in pr.changes if c.kind == "added" and package_source(c.path)]
    kinds = [_symbol_kind(c) for c in added]
    out.add(f"newclass:{_bucket(kinds.count('class'), _COUNT, '4+')}")
    out.add(f"newfunc:{_bucket(kinds.count('function'), _SYMBOLS, '11+')}")
    reached = sum(1 for c in added if c.reach == "public" and c.public)
    if reached:
        out.add("newpublic:" + ("1-2" if reached <= 2 else "3+"))
    if any(_DEFAULT_CHANGE.search(c.detail) or (c.kind in ("config", "env") and c.detail == "default")
           for c in pr.changes if c.public and package_source(c.path)):
        out.add("default-changed")
    pins = [c for c in pr.changes if c.kind == "dependency"]
    if pins:
        # How many files carry the pin: a platform every image and manifest names, or one tool in one file.
        out.add("pin:" + ("1-2" if len({c.path for c in pins}) <= 2 else "3+"))
    if any(not c.after and c.before for c in pins):
        out.add("pin:dropped")  # a version's support dropped: the baseline moved
    total = pr.additions + pr.deletions
    if total >= 200 and new_lines == 0 and min(pr.additions, pr.deletions) >= 0.6 * max(pr.additions, pr.deletions):
        out.add("mechanical")  # as much removed as added and no new code: a move, a reformat, a revert
    if src and new_lines == 0 and sum(f.additions for f in src) * 4 < total:
        out.add("mostly-not-source")
    return out


def body_features(pr: PullRequest) -> set[str]:
    """How much the description explains: its explanation sections, an RFC, the prose beyond the template."""
    raw = clean(pr.body[:40_000])
    out = set()
    sections = sum(1 for line in raw.splitlines() if _EXPLAINS.match(line) and not line.rstrip().endswith("?"))
    if sections:
        out.add("explains:" + ("1" if sections == 1 else "2+"))
    if _RFC.search(pr.title) or _RFC.search(raw):
        out.add("rfc")
    prose, fenced = 0, False
    for line in strip_template(raw).splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        text = line.strip()
        if fenced or not text or text.startswith("|") or _BOILERPLATE.match(text) or len(text.split()) < 6:
            continue
        prose += len(text)
    out.add(f"prose:{_bucket(prose, _PROSE, '1500+')}")
    return out


def depth_features(pr: PullRequest) -> set[str]:
    """All of this module's features for ``pr``."""
    return code_features(pr) | body_features(pr)
