"""Facts read from a PR's patches when no git facts are there (no clone, or a PR the clone lacks): each
Python file's hunk headers and changed ``def``/``class`` lines. What they give is partial: a hunk shows only
part of a file, so a method whose class is not in sight is named ``*.method`` (any class of that module), and
every impact matched from them is marked ``partial``."""

from __future__ import annotations

import re
from collections.abc import Sequence

from prdigest.collect.facts.hunklines import Hunk, hunks
from prdigest.collect.facts.patchmoves import relocated
from prdigest.collect.facts.pyapi import PASSES
from prdigest.connect.impact.matchers import WILDCARD
from prdigest.connect.impact.signature import Signature
from prdigest.kernel.models import Change, ChangeKind, PullRequest

#: Line numbers of at most 18 digits (``int`` refuses 4,300 digits and more: such a header is no hunk).
_HEADER = re.compile(r"^@@ -(\d{1,18})(?:,\d+)? \+(\d{1,18})(?:,\d+)? @@ ?(.*)$")
_DEF = re.compile(r"^(\s*)(?:async\s+)?(def|class)\s+([A-Za-z_]\w*)\s*(.*)$")


def _in_upstream(path: str, upstream: Sequence[str]) -> bool:
    return path.endswith(".py") and any(path.startswith(u.replace(".", "/") + "/") for u in upstream)


def facts_from_patches(pr: PullRequest, upstream: Sequence[str]) -> list[Change]:
    """The facts a PR's patches show in the upstream's Python files: files deleted or renamed, ``def`` and
    ``class`` lines removed (``removed``), changed (``signature``), or enclosing changed lines (``body``)."""
    facts: list[Change] = []
    for f in pr.files:
        if f.status == "removed" and _in_upstream(f.path, upstream):
            facts.append(Change(kind="file-deleted", symbol=f.path, path=f.path))
            continue
        if f.status == "renamed" and f.previous_path and _in_upstream(f.previous_path, upstream):
            facts.append(Change(kind="file-renamed", symbol=f.previous_path, path=f.path, before=f.previous_path,
                                after=f.path))
        if not f.patch or not _in_upstream(f.path, upstream):
            continue
        facts += _file_facts(f.path, f.patch)
    added = [raw[1:] for f in pr.files if f.patch and _in_upstream(f.path, upstream)
             for raw in f.patch.splitlines() if raw.startswith("+") and not raw.startswith("+++")]
    return relocated([_passed(fact, added) for fact in facts], [(f.path, f.patch) for f in pr.files])


def _passed(fact: Change, added: list[str]) -> Change:
    """A signature fact that adds parameters with a default, saying which of them an added line of the PR
    passes by keyword to a call of that name on the same line (``x.forward(h, eps=…)``; a ``super()`` call
    is the upstream's own chain) — what a patch shows of the facts engine's reading of call sites."""
    if fact.kind != "signature":
        return fact
    old, new = Signature.parse(fact.before), Signature.parse(fact.after)
    if old is None or new is None:
        return fact
    names = [n for n in new.names if n not in old.names and n in new.defaults]
    if not names or any(n not in new.names for n in old.names) or any(
            n not in new.defaults for n in new.names if n not in old.names):
        return fact
    leaf = fact.symbol.rsplit(".", 1)[-1]
    callee = fact.symbol.rsplit(".", 2)[-2] if leaf == "__init__" and "." in fact.symbol else leaf
    call = re.compile(rf"(?<![\w.])(super\(\)\.)?(?:[\w.]+\.)?{re.escape(callee)}\s*\((.*)")
    passed = []
    for name in names:
        keyword = re.compile(rf"\b{re.escape(name)}\s*=(?!=)")
        for text in added:
            m = call.search(text)
            if m and not m.group(1) and keyword.search(m.group(2)) and not _DEF.match(text):
                passed.append(name)
                break
    if not passed:
        return fact
    return fact.model_copy(update={"detail": fact.detail + PASSES.format(" and ".join(passed)),
                                   "passed": tuple(passed)})


def _in_method(hunk: Hunk) -> bool:
    """Whether the ``def`` git's header names is a method: its parameters start with ``self`` or ``cls``, or,
    when they are out of sight, the hunk's lines above any at column 0 use ``self``."""
    m = re.match(r"^(?:async\s+)?def\s+\w+\s*\(\s*(\w*)", hunk.header.strip())
    if not m:
        return False
    if m[1]:
        return m[1] in ("self", "cls")
    for row in hunk.rows:
        if row.text.strip() and not row.text[:1].isspace():
            return False
        if re.search(r"\bself\b", row.text):
            return True
    return False


def _closed(text: str) -> bool:
    """Whether a ``def``/``class`` line holds its whole parameter list (its brackets balance)."""
    code = re.sub(r"\"[^\"]*\"|'[^']*'", "''", text).split("#", 1)[0]
    return code.count("(") == code.count(")") and code.count("[") == code.count("]")


def _qualified(name: str, indent: int, classes: list[tuple[int, str]]) -> str:
    if indent == 0:
        return name
    owner = next((c for i, c in reversed(classes) if i < indent), None)
    return f"{owner}.{name}" if owner else f"{WILDCARD}.{name}"


def _file_facts(path: str, patch: str) -> list[Change]:
    removed: dict[str, tuple[int, str]] = {}
    added: dict[str, tuple[int, str]] = {}
    bodies: dict[str, int] = {}
    classes: list[tuple[int, str]] = []  # (indent, name) of the classes in sight
    current: str | None = None  # the def the changed lines are in
    current_indent = -1
    abstract: set[str] = set()  # methods added under an added @abstractmethod
    decorated = False  # the previous added line was @abstractmethod
    old_line = new_line = 0
    in_methods = iter([_in_method(h) for h in hunks(patch)])
    for raw in patch.splitlines():
        header = _HEADER.match(raw)
        if header:
            old_line, new_line = int(header.group(1)), int(header.group(2))
            classes = []
            context = _DEF.match(header.group(3))
            current, current_indent = None, -1
            method = next(in_methods, False)
            if context:
                indent, kind, name, _ = context.groups()
                if kind == "class":
                    classes.append((len(indent.expandtabs()), name))
                elif method:
                    # git's Python driver (GitHub's) writes a method's def without its indentation or class
                    current, current_indent = f"{WILDCARD}.{name}", 4
                else:
                    current, current_indent = _qualified(name, len(indent.expandtabs()), classes), \
                        len(indent.expandtabs())
            continue
        if not raw or raw[0] not in " +-":
            continue
        sign, text = raw[0], raw[1:]
        line = new_line if sign != "-" else old_line
        if sign != "+":
            old_line += 1
        if sign != "-":
            new_line += 1
        m = _DEF.match(text)
        if sign == "+" and text.strip() in ("@abc.abstractmethod", "@abstractmethod"):
            decorated = True
            continue
        if m:
            indent, kind, name, rest = m.groups()
            width = len(indent.expandtabs())
            classes = [c for c in classes if c[0] < width]
            qualified = _qualified(name, width, classes)
            if kind == "class":
                classes.append((width, name))
            if sign == "-":
                removed.setdefault(qualified, (line, text.strip()))
            elif sign == "+":
                added.setdefault(qualified, (line, text.strip()))
                if decorated and kind == "def":
                    abstract.add(qualified)
            decorated = False
            if kind == "def":
                current, current_indent = qualified, width
            continue
        if text.strip() and current is not None:
            width = len(text) - len(text.lstrip())
            if width <= current_indent and not text.lstrip().startswith((")", "#")):
                current, current_indent = None, -1
            elif sign in "+-":
                bodies.setdefault(current, line)
    facts: list[Change] = []
    for name, (line, text) in removed.items():
        public = not name.rsplit(".", 1)[-1].startswith("_") or name.endswith("__")
        if name not in added:
            facts.append(Change(kind="removed", symbol=name, path=path, line=line, before=text, public=public))
        elif added[name][1] != text and _closed(text) and _closed(added[name][1]) \
                and not text.startswith("class"):  # a class line's parentheses hold its bases (a ``bases`` fact)
            # a ``def f(`` line whose parameters follow on other lines shows none of them: no signature from it
            facts.append(Change(kind="signature", symbol=name, path=path, line=added[name][0], before=text,
                                after=added[name][1], public=public))
    for name, (line, text) in added.items():
        # A method added to a class in sight (never a guessed one): new abstract methods matter to subclasses,
        # and a new method the downstream's subclass already defines is now overridden by it.
        if name in removed or "." not in name or name.startswith(WILDCARD + "."):
            continue
        fact_kind: ChangeKind = "abstract" if name in abstract else "added"
        facts.append(Change(kind=fact_kind, symbol=name, path=path, line=line, after=text,
                            public=not name.rsplit(".", 1)[-1].startswith("_")))
    for name, line in bodies.items():
        if (name in removed) == (name in added):  # neither new nor gone: its body changed
            facts.append(Change(kind="body", symbol=name, path=path, line=line,
                                public=not name.rsplit(".", 1)[-1].startswith("_")))
    return facts
