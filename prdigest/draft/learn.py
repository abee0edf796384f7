"""What a reader can learn from a PR, even when every name it touches is internal (a plugin's kernels, its
model runner): a fix whose description explains its root cause or a kernel's synchronisation, a new mechanism
shipped with its code, a contract between components (a base class shared, one method changed across its
implementations), a design trade-off stated with its reason. Some are read off the code alone, for repositories whose
PRs carry no description: a kernel's, a fix of accuracy that now computes in a wider type, one method's results
changed on several classes, another project's extension point implemented by a new module.

Reach says who must act; a lesson says who should study. Each lesson rests on the PR's own text and files, never
on its size alone, and a change that only moves, renames or adapts code to the upstream teaches none of these
(prdigest/draft/verdict.py weighs the lessons and applies the mechanical rules).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from prdigest.draft import scope
from prdigest.kernel import bodyfacts
from prdigest.kernel.models import Change
from prdigest.kernel.prtext.prose import clean_line
from prdigest.kernel.prtext.signals import Signals, quiet_path

#: New shipped source (lines of new files beyond what the PR removed from shipped code) that makes a mechanism.
MECHANISM_LINES = 150
#: What each lesson weighs in the verdict's score (prdigest/draft/verdict.py). A root cause or a trade-off the
#: author explains is the study itself; a new mechanism or shared base is half of one: labellers split on new
#: kernels and quantization schemes that follow the pattern of earlier ones.
#: One method added or re-signed across several classes is a contract each implementation now follows, the study
#: itself like a root cause: on eighteen labelled vllm-ascend weeks both labellers called 8 of the 14 such PRs a
#: deep read (a base class shared, "contract", 3 of 4; a root cause explained, 4 of 22).
#: A kernel's synchronisation fixed is the textbook class of kernel bug (3 of 3 such fixes both labellers' deep reads).
#: A kernel of a Python kernel language is the study itself and its own explanation (tpu-inference writes no
#: descriptions; on its two fitting weeks both labellers called the three PRs with such a lesson deep reads): a new
#: kernel put to use, its numerics fixed, or a new mode of it.
#: The same reading of any function's code (prdigest/collect/facts/bodyaspects.py) weighs as much: a fix of accuracy
#: that now computes in float32 where it rounded early; and more, a method whose results changed shape on several
#: classes of several modules (each caller unpacks something else): on tpu-inference's fitting weeks, where descriptions
#: are empty, both labellers called the PRs these find deep reads ("bf16 where GPU FLA uses fp32"; "MoE layers now
#: return (output, expert_ids)": "the layer contract changes"); on the eighteen vllm-ascend weeks the first fires once
#: (a fix both labellers skim, and it stays a skim), the second never.
#: A new module of a subsystem's size implementing another project's base class (prdigest/collect/facts/implements.py)
#: is a new implementation of that project's extension point, whole: on those weeks and tpu-inference's four, all four
#: such modules of 500 lines or more were both labellers' deep reads (a KV offloading connector, a chunked-pipeline
#: scheduler, a custom-op build framework, a context-parallel attention builder), against 6 of 29 smaller ones.
WEIGHT = {"root-cause": 1.25, "trade-off": 1.25, "interface": 1.25, "sync": 1.25, "mechanism": 0.5, "contract": 0.5,
          "kernel-new": 1.5, "kernel-numerics": 1.5, "kernel-mode": 1.5, "numerics": 1.5, "results": 2.0,
          "extension": 1.5}
#: Lessons read off the code: the description's length says nothing about them.
KERNEL_LESSONS = frozenset({"kernel-new", "kernel-numerics", "kernel-mode", "numerics", "results", "extension"})
#: Kernel languages whose facts say how a kernel is launched and where it casts (prdigest/collect/facts/pykernels.py).
_PYTHON_KERNELS = frozenset({"triton", "pallas"})
#: Classes that add or re-sign the same method in one PR: an interface they all implement moved.
INTERFACE_CLASSES = 3
#: Lines of one new module implementing another project's base that make it a subsystem (:func:`extension`).
EXTENSION_LINES = 500
#: The detail of an ``added`` class fact naming the other project's bases it implements (prdigest/collect/facts/
#: implements.py; the draft does not import the collectors).
_IMPLEMENTS = "implements "
#: Modules a method's changed results must span to be a contract between components (prdigest.draft.learn.results).
RESULT_MODULES = 3
#: Kinds of fact a mechanical change is made of: names moved or renamed, files moved, tests.
_MECHANICAL = frozenset({"renamed", "moved", "file-renamed", "tests", "passes"})


def _compile(pattern: str) -> re.Pattern[str]:
    # Descriptions wrap lines anywhere: a space in a pattern is any run of whitespace.
    return re.compile(pattern.replace(" ", r"\s+"), re.IGNORECASE)


#: A class of bug worth knowing: results silently wrong, state gone stale or out of step, a race, a hang (a crash
#: or an error message is its own report; the rubric's lesson is the failure nobody sees).
_FAILURE = _compile(
    r"\b(accuracy|precision (?:loss|drop|issue|error|anomal\w+)|wrong|incorrect\w*|garbled|gibberish|stale|"
    r"race (?:condition)?|hangs?|hung|deadlocks?|leak\w*|out of (?:sync|step)|inconsisten\w+|"
    r"silent(?:ly)? (?:wrong|incorrect|corrupt\w*|drop\w*|skip\w*|stopp\w*|lost|discard\w*)|corrupt\w*|NaNs?|"
    r"never (?:loaded|freed|released|sent|called|put|reached)|"
    r"(?:no longer|not|never) (?:updated|synchroni[sz]ed|refreshed|propagated|applied)|double[- ]counted|lost|"
    r"unreasonabl\w*|fail(?:s|ed|ures?)? to (?:load|transfer|send|receive|put|save|free|release))\b")
#: A failure that announces itself: an exception, an error, a crash, a wrong shape or type (not a lesson in
#: silent failure; its fix is a contained one).
_LOUD = _compile(r"\b(errors?|exceptions?|crash\w*|\w+Error|type mismatch\w*|(?:incorrect|wrong) (?:shape|type|"
                 r"signature|argument)s?|fails? to (?:compile|start|run|import|build)|would fail)\b")
#: How it happened: a cause, a consequence or the mechanism named in so many words.
_CAUSE = _compile(
    r"\b(because|root cause|the reason|due to|caused by|causes|causing|lead(?:s|ing)? to|led to|result(?:s|ed)? in|"
    r"otherwise|incurs?|(?:is|are) (?:necessary|needed|required) (?:for|to)|"
    r"as a result|which (?:means|made|makes|broke|breaks)|so (?:that )?the|still (?:holds?|points?|uses?|keeps?|"
    r"treats?|refers?)|kept (?:treating|using|holding)|instead of|rather than|never|only when|whenever)\b")
#: A design trade-off stated as one: the alternative, its cost or what it avoids.
_TRADE_OFF = _compile(
    r"\b(trade-?offs?|at the cost of|instead of|rather than|in exchange for|avoids? (?:a |the )?(?:host-device |"
    r"device |extra |per-step |unnecessary )?(?:sync\w*|copy|copies|barrier|overhead|recompil\w+|round trips?)|"
    r"(?:forces?|requires?|needs?) (?:a |an )?(?:host-device |device )?sync\w*|"
    r"only (?:pays|needed) (?:off )?(?:when|in|for))\b")
#: A cost the description traces to its mechanism: a regression, an overhead, a stall or waste, and what causes it.
_COST = _compile(r"\b(regressions?|overheads?|host[- ]bound|bubbles?|wasted?|bottlenecks?|stalls?|barriers?|"
                 r"(?:host-device |device |extra )sync\w*)\b")
_COST_CAUSE = _compile(r"\b(caus\w+|result(?:s|ed|ing)? in|lead(?:s|ing)? to|led to|because|due to|to avoid|forces?)\b")
#: Work that only follows the upstream: a sync, a rebase, an adaptation without a reason of its own.
_ADAPTATION = _compile(r"\b(main\s?2\s?main|adapt\w* (?:to|for) (?:the )?(?:upstream|vllm|latest)|sync\w* (?:with|to) "
                       r"(?:the )?(?:upstream|vllm)|upgrade vllm to|bump vllm)\b")


@dataclass(frozen=True)
class Lesson:
    """One thing to study in a PR, with the phrase or file that shows it."""

    #: root-cause | sync | kernel-new | kernel-numerics | kernel-mode | numerics | extension | mechanism | contract |
    #: interface | results | trade-off
    key: str
    evidence: str


def root_cause(s: Signals) -> Lesson | None:
    """A fix whose description says what went wrong and how, in one sentence: the class of bug, not one case."""
    if not (s.is_bugfix or re.search(r"\bfix", s.core_title, re.IGNORECASE)) or not scope.shipped(s):
        return None
    for sentence in _sentences(s.body):
        failure, cause = _FAILURE.search(sentence), _CAUSE.search(sentence)
        if failure and cause and not _LOUD.search(sentence):
            return Lesson("root-cause", _around(sentence, failure, cause))
    return None


#: How a kernel's cores, pipelines or engines wait for each other: a flag or event set, a barrier, an atomic write,
#: and the failures of getting it wrong (a deadlock, a race), or an order stated ("set too early").
_SYNC = _compile(r"\b(synchroni[sz]\w*|sync (?:flags?|signals?|logic|bug)|(?:set|wait)flag\w*|"
                 r"flags? (?:is |are |was |were )?(?:set|waited|cleared|raised)|barriers?|atomic\w*|"
                 r"(?:hardware )?events?|deadlocks?|race (?:condition)?|fences?|semaphores?|too (?:early|late))\b")
#: Compiled kernel sources: what a device runs (C++, CUDA, AscendC headers).
_COMPILED = re.compile(r"\.(?:c|cc|cpp|cxx|cu|cuh|h|hh|hpp)$", re.IGNORECASE)


def kernel_sync(s: Signals) -> Lesson | None:
    """A fix to existing compiled kernels whose description names how the kernel synchronises (a flag set too
    early, a 512-byte block assumed to be written atomically, flag ids that collide into a deadlock): the class of
    bug every kernel author meets, whatever the device. A new kernel is no fix; a build or binding fix names none."""
    if not (s.is_bugfix or re.search(r"\bfix", s.core_title, re.IGNORECASE)):
        return None
    if not any(_COMPILED.search(f.path) and not f.is_new for f in scope.shipped(s)):
        return None
    for sentence in [s.core_title, *_sentences(s.body)]:
        if found := _SYNC.search(sentence):
            return Lesson("sync", _around(sentence, found))
    return None


#: A title or opening that says the PR makes something faster: a kernel sped up computes what it computed before
#: (both labellers of the vllm-ascend weeks read such Triton rewrites, new kernels replacing PyTorch ops included, as
#: a skim: a local performance tweak).
_SPEED_UP = _compile(r"\b(optimi[sz]\w*|speed\w* up|speedups?|accelerat\w*|faster|(?:better |high[- ])?performance|"
                     r"perf|latency|throughput)\b")
#: Characters of the description that say what the PR is for.
_OPENING = 400
#: A failure of numerics: what a kernel's casts to a narrower type decide.
_NUMERIC_FAILURE = _compile(r"\b(accura\w+|precision|numerical\w*|NaNs?|overflow\w*|underflow\w*|rounding)\b")


def kernel(s: Signals) -> Lesson | None:
    """A kernel of a Python kernel language (Triton, Pallas: its facts say where it is launched and where it casts)
    changed in a way a kernel author studies whatever the description says (:func:`kernel_fact`)."""
    found = kernel_fact(s)
    if found is None:
        return None
    key, c = found
    return Lesson(key, f"{c.symbol}({c.detail.split(',')[0]})" if key == "kernel-mode" else c.symbol)


def kernel_fact(s: Signals) -> tuple[str, Change] | None:
    """The kernel lesson's key and the fact it rests on: a new kernel the PR's own code now calls (a new device
    path, not an op left for a later PR to wire), a kernel's numerics changed by a fix of accuracy (where it rounds
    decides what it computes), or a kernel given a new mode (a parameter added, its file reworked by a mechanism's
    worth of lines). A cast moved in a fix of something else, a dtype made a parameter in a small change, a new op
    nothing calls yet or a kernel the title or the description's opening says it speeds up is a kernel fact, not a
    lesson."""
    kernels = [c for c in s.changes if c.kind == "kernel" and c.language in _PYTHON_KERNELS and not quiet_path(c.path)]
    if not kernels or _SPEED_UP.search(f"{s.core_title}\n{s.body[:_OPENING]}"):
        return None
    for c in kernels:
        if c.detail == "added" and c.needed_by:
            return "kernel-new", c
    fixes = s.is_bugfix or re.search(r"\bfix", s.core_title, re.IGNORECASE)
    if fixes and _NUMERIC_FAILURE.search(f"{s.core_title}\n{s.body[:2000]}"):
        for c in kernels:
            if c.detail.startswith("numerics: "):
                return "kernel-numerics", c
    for c in kernels:
        if c.detail.startswith("+") and c.before:
            if sum(f.changes for f in s.files if f.path == c.path) >= MECHANISM_LINES:
                return "kernel-mode", c
    return None


def numerics(s: Signals) -> Lesson | None:
    """A PR whose title or opening names a failure of numerics (accuracy, precision, NaN, overflow) and whose shipped
    code now casts to single precision or wider where it did not (prdigest/collect/facts/bodyaspects.py): where a
    computation rounds decides what it computes, kernel or not. A kernel's own numerics are its kernel lesson; a
    feature that happens to cast (a new algorithm checked for accuracy) is no fix of numerics."""
    fixes = s.is_bugfix or re.search(r"\b(?:fix|bug)", s.core_title, re.IGNORECASE) or any("bug" in t for t in s.tags)
    if not fixes or not _NUMERIC_FAILURE.search(f"{s.core_title}\n{s.body[:_OPENING]}"):
        return None
    for c in s.changes:
        if c.kind == "body" and not quiet_path(c.path):
            cast = bodyfacts.aspects(c.detail).get(bodyfacts.NUMERICS, "")
            if bodyfacts.widened(cast):
                return Lesson("numerics", c.symbol)
    return None


def results(s: Signals) -> Lesson | None:
    """One method returning another number of values on several classes in several modules of shipped code
    (``__call__`` now returns ``(out, expert_ids)`` on every MoE layer and block): what each caller unpacks
    changed, a contract between components that each implementation, and every module calling one, must follow."""
    owners: dict[str, set[tuple[str, str]]] = {}
    for c in s.changes:
        if c.kind == "body" and "." in c.symbol and not quiet_path(c.path):
            if bodyfacts.arity_changed(bodyfacts.aspects(c.detail).get(bodyfacts.RETURNS, "")):
                owner, method = c.symbol.rsplit(".", 1)
                owners.setdefault(method, set()).add((owner, c.path))
    # Across modules: a follow-up adapting one model's classes to a contract changed earlier stays in its own files.
    shared = [(len(classes), method) for method, classes in owners.items() if len(classes) >= INTERFACE_CLASSES
              and len({path for _, path in classes}) >= RESULT_MODULES]
    if not shared:
        return None
    n, method = max(shared)
    return Lesson("results", f"{method} ×{n}")


def extension(s: Signals) -> Lesson | None:
    """A new shipped module of :data:`EXTENSION_LINES` or more (not a model) defining a class that implements
    another project's base (``TPUOffloadConnector(KVConnectorBase_V1)``): a new implementation of that project's
    extension point, with the machinery behind it, that readers of both projects meet. A small adapter of one
    upstream class (a custom op, a quantization scheme following earlier ones) is not one."""
    big = {f.path for f in scope.shipped(s) if f.is_new and f.additions >= EXTENSION_LINES and "models/" not in f.path}
    found = [c for c in s.changes if c.kind == "added" and c.path in big and c.detail.startswith(_IMPLEMENTS)]
    if not found:
        return None
    # the class its module is named after (tpu_offload_connector.py: TPUOffloadConnector) before its helpers' types
    c = min(found, key=lambda c: c.symbol.lower() != c.path.rsplit("/", 1)[-1].removesuffix(".py").replace("_", ""))
    base = c.detail[len(_IMPLEMENTS):].split(", ")[0].rsplit(".", 1)[-1]
    return Lesson("extension", f"{c.symbol}({base})")


def _mechanism(s: Signals) -> Lesson | None:
    """New shipped Python modules of substance that define classes (not a model following a pattern, not a file
    moved): a mechanism others will meet. A new kernel alone weighs as a kernel fact; as a lesson it split the
    labellers (one week's new op a deep read, another's a skim) where a new class hierarchy did not."""
    shipped = scope.shipped(s)
    new = [f for f in shipped if f.is_new and "models/" not in f.path]
    grown = sum(f.additions for f in new) - sum(f.deletions for f in shipped)
    if grown < MECHANISM_LINES:
        return None
    paths = {f.path for f in new}
    defined = [c for c in s.changes if c.path in paths and c.path.endswith(".py") and c.kind == "added"
               and re.fullmatch(r"_?[A-Z]\w*", c.symbol)]
    if not defined:
        return None
    return Lesson("mechanism", max(new, key=lambda f: f.additions).path)


def _contract(s: Signals) -> Lesson | None:
    """A new base class that two or more classes of the PR now derive from: where components now meet. (A name
    in the prose alone, "interface", is too often one method added.)"""
    added = {c.symbol for c in s.changes if c.kind == "added" and "." not in c.symbol}
    shared = [c for c in s.changes if c.kind == "bases" and any(a in c.after for a in added)]
    if len(shared) < 2 or s.unchanged_behaviour or _hoisted(s):
        return None  # methods only hoisted into the new base: code moved, no contract changed
    return Lesson("contract", next(a for a in sorted(added) if any(a in c.after for c in shared)))


def _interface(s: Signals) -> Lesson | None:
    """The same method added or re-signed on several classes of shipped code (``get_graph_support`` on every
    attention builder, a parameter renamed on every quantization method's ``apply``): a contract between
    components that each implementation, and the next one written, must follow. Constructors are left out: a new
    argument threaded through ``__init__`` is wiring, not an interface."""
    owners: dict[str, set[str]] = {}
    for c in s.changes:
        if c.kind in ("added", "signature") and "." in c.symbol and c.path.endswith(".py") and not quiet_path(c.path):
            owner, method = c.symbol.rsplit(".", 1)
            if method != "__init__":
                owners.setdefault(method, set()).add(owner)
    shared = [(len(classes), method) for method, classes in owners.items() if len(classes) >= INTERFACE_CLASSES]
    if not shared or s.unchanged_behaviour:
        return None
    n, method = max(shared)
    return Lesson("interface", f"{method} ×{n}")


def _trade_off(s: Signals) -> Lesson | None:
    """A choice the description argues for: the alternative or its cost beside a speed or memory figure, or a
    cost (an overhead, a stall, waste) traced to what causes it."""
    if not scope.shipped(s) or s.unchanged_behaviour:
        return None  # "behaviour is identical": a refactor's choices are its own business
    # An accuracy check shows the change is right, not what it trades: "uses X instead of Y" beside a GSM8K score
    # is how code is written, and both labellers of two held-out weeks read such PRs as a skim.
    if s.perf_claims or s.perf_units:
        for sentence in [s.core_title, *_sentences(s.body)]:
            if choice := _TRADE_OFF.search(sentence):
                return Lesson("trade-off", _around(sentence, choice))
    for sentence in _sentences(s.body):
        cost = _COST.search(sentence)
        if cost and (cause := _COST_CAUSE.search(sentence)):
            return Lesson("trade-off", _around(sentence, cost, cause))
    return None


def _around(sentence: str, *found: re.Match[str], words: int = 3) -> str:
    """The words of ``sentence`` from the first match to the last and ``words`` either side, at most 80
    characters: the cause and its failure as the author put them ("kept using the stale copy, which caused")."""
    start, end = min(m.start() for m in found), max(m.end() for m in found)
    before, after = sentence[:start].split(), sentence[end:].split()
    left, right = " ".join(before[-words:]), " ".join(after[:words])
    # a match inside a word run ("(instead") keeps its neighbour attached, as written
    lead = " " if left and sentence[start - 1:start].isspace() else ""
    tail = " " if right and sentence[end:end + 1].isspace() else ""
    return clean_line(f"{left}{lead}{sentence[start:end]}{tail}{right}".strip(" ,;:"), 80)


def _sentences(body: str) -> list[str]:
    """The description's sentences (a blank line or a sentence's end), wrapped lines joined."""
    return [x.replace("\n", " ") for x in re.split(r"(?<=[.!?])\s+|\n\s*\n|\n\s*[-*]\s", body) if x.strip()]


def lessons(s: Signals) -> tuple[Lesson, ...]:
    """What ``s`` teaches, at most one lesson of each kind; none for a change that only follows the upstream and
    says no reason of its own."""
    from_kernel = kernel(s)
    found = tuple(x for x in (root_cause(s), kernel_sync(s), from_kernel, None if from_kernel else numerics(s),
                              extension(s), _mechanism(s), _contract(s), _interface(s), results(s), _trade_off(s))
                  if x is not None)
    if found and adaptation(s) and all(x.key in ("contract", "interface", "results") for x in found):
        return ()  # an adaptation names the upstream's interfaces; the lesson is upstream's
    return found


def adaptation(s: Signals) -> bool:
    """Whether the title or description says the PR follows the upstream (a main-to-main sync, an adaptation)."""
    return bool(_ADAPTATION.search(f"{s.core_title}\n{s.body[:600]}"))


def _hoisted(s: Signals) -> bool:
    """Methods moved up into a new internal base class the PR's classes now inherit from: code moved, not
    behaviour."""
    bases = {c.after for c in s.changes if c.kind == "bases"}
    return bool(bases) and all(
        c.kind in _MECHANICAL or c.kind == "bases" or (c.kind == "body" and c.detail.startswith("now inherited"))
        or (c.kind == "added" and c.symbol in bases) for c in s.changes if c.reach == "internal")


def mechanical(s: Signals) -> Change | None:
    """The first fact of a PR whose facts are all internal renames, moves and tests (no body, no setting), or
    None: moving code teaches a reader nothing they will meet."""
    if not s.changes or s.kinds or any(c.reach == "public" for c in s.changes):
        return None
    if _hoisted(s):
        return next((c for c in s.changes if c.kind == "bases"), None)
    if any(c.kind not in _MECHANICAL for c in s.changes):
        return None
    return next((c for c in s.changes if c.kind != "tests"), None)
