"""Settings a check now refuses at startup: a ``raise`` with a message that a setting leads to, in shipped Python.

The setting a ``raise`` belongs to is the one that turns its check on: the outermost ``if`` on the way to it (an
early ``if not x: return`` counts as one) whose test reads exactly one setting, when the error's message names it
(``if envs.VLLM_X: … raise ValueError("VLLM_X only supports …")``); else the one key the tests on its way look up
in a config mapping (``if not additional_config.get("layer_sharding"): return``). A setting is a config key read from a
mapping named like a config (``additional_config.get("k")``, ``self.config["k"]``), an attribute of an object
named like a config that is not a config itself (``ascend_config.recompute_scheduler_enable``, not
``vllm_config.kv_transfer_config``; nor of a model's ``hf_config``), or an environment variable (``os.getenv("X")``,
``envs.X``).

A PR asks something of a reader when the check is new for that setting, or when the condition that reaches the
``raise`` now holds in every case it held before and in some more (``kv is not None and role != "p"`` →
``kv is None or role != "p"``: the setups that passed without a transfer config are refused now). A check only
reworded, moved (inside its file or from another file of the commit: :func:`moved`), narrowed, the ``else`` of a
dispatch on the setting's values (an unknown value refused: :func:`_unknown_value`), one refusing the setting
left unset or empty (:func:`_absence`), one of a setting
no shipped module named before the commit (:func:`known_before`), or one raising
``NotImplementedError`` (a combination not supported yet) asks nothing. Each is an ``env`` or ``config`` fact with
detail ``rejected`` and the error's message as ``after``.
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from prdigest.collect.facts.settings import _ENV_NAME, _env_call
from prdigest.collect.facts.surface import Surface
from prdigest.collect.git import GitUnavailable, UpstreamClone
from prdigest.collect.git.texts import tree_texts
from prdigest.kernel.models import Change
from prdigest.kernel.safe_parse import parse

#: The longest error message a rejection's fact quotes.
MAX_MESSAGE = 120
#: Conditions over more distinct tests than this are not compared (2**12 cases at most).
MAX_ATOMS = 12
#: Nor are more ways to one setting's raises than this (a generated file's thousand checks of one key).
MAX_PATHS = 64
#: Tests kept on the way to one raise, outermost first (the ones that say which setting turns it on).
MAX_STEPS = 16
_CONFIG_OWNER = re.compile(r"config\W*$", re.IGNORECASE)
#: Configs read from a model's or a checkpoint's files: their attributes are no setting a reader makes.
_MODEL_CONFIG = re.compile(r"(^|\.)(hf_config|hf_text_config|text_config|vision_config|quant_config|"
                           r"quantization_config)$")
#: The ``[tool.*]`` tables of pyproject.toml (``tool``, ``tool.ruff``) and setup.cfg's or tox's ``[tool:pytest]``
#: sections: a development tool's own configuration, which no reader of the package sets (vllm-ascend #7891).
_TOOL_TABLE = re.compile(r"tool([.:].*)?")
_ENVS_OWNER = re.compile(r"(^|[._])envs?(_\w+)?$|^\w+_envs$")

Kind = Literal["env", "config"]
Key = tuple[Kind, str]
#: One test on the way to a ``raise`` and whether it holds (True) or fails (False) there.
Step = tuple[ast.expr, bool]


@dataclass
class Rejection:
    """A setting's checks in one file: the first error's message and line, each path that reaches a raise, and
    every message they raise."""

    message: str
    line: int
    paths: list[list[Step]] = field(default_factory=list)
    messages: set[str] = field(default_factory=set)
    #: The line of each path's ``raise``, in the order of ``paths``.
    lines: list[int] = field(default_factory=list)


def _owner(node: ast.expr) -> str:
    """The dotted name an attribute or ``.get`` is read from (``get_ascend_config()`` → ``get_ascend_config``)."""
    parts: list[str] = []
    while True:
        if isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Subscript):
            node = node.value
        else:
            break
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _tool_table(node: ast.expr) -> bool:
    """Whether a key lookup is of a ``[tool.*]`` table or inside one (``config.get("tool", {}).get("x")``,
    ``config["tool"]["x"]``)."""
    while isinstance(node, (ast.Call, ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute) and node.func.attr == "get" and node.args \
                    and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str) \
                    and _TOOL_TABLE.fullmatch(node.args[0].value):
                return True
            node = node.func
        elif isinstance(node, ast.Subscript):
            if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str) \
                    and _TOOL_TABLE.fullmatch(node.slice.value):
                return True
            node = node.value
        else:
            node = node.value
    return False


def setting_read(node: ast.AST) -> Key | None:
    """The setting ``node`` itself reads, or None."""
    env = _env_call(node)
    if env is not None:
        return ("env", env[0]) if _ENV_NAME.fullmatch(env[0]) else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
            and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str) \
            and _CONFIG_OWNER.search(_owner(node.func.value)):
        return None if _tool_table(node) else ("config", node.args[0].value)
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
            and isinstance(node.slice.value, str) and _CONFIG_OWNER.search(_owner(node.value)):
        return None if _tool_table(node) else ("config", node.slice.value)
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
        owner = _owner(node.value)
        if _ENVS_OWNER.search(owner) and _ENV_NAME.fullmatch(node.attr):
            return "env", node.attr
        if _CONFIG_OWNER.search(owner) and not _MODEL_CONFIG.search(owner) and not _CONFIG_OWNER.search(node.attr) \
                and not node.attr.startswith("_"):
            return "config", node.attr
    return None


def _reads(node: ast.AST, aliases: dict[str, Key], *, keyed: bool = False) -> set[Key]:
    """Every setting an expression reads, directly or through a local name assigned from one (``keyed``: only keys
    looked up in a config mapping, ``.get("k")`` / ``["k"]``, and environment variables read by name)."""
    found: set[Key] = set()
    for sub in ast.walk(node):
        key = setting_read(sub) if not keyed or isinstance(sub, (ast.Call, ast.Subscript)) else None
        if key is None and isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
            key = aliases.get(sub.id)
        if key is not None:
            found.add(key)
    return found


def _message(exc: ast.expr | None) -> str:
    """The error's message as written (a formatted value as ``…``), or "" when it has none to quote."""
    if not isinstance(exc, ast.Call) or not exc.args:
        return ""
    first = exc.args[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        text = first.value
    elif isinstance(first, ast.JoinedStr):
        text = "".join(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "…"
                       for v in first.values)
    else:
        return ""
    return " ".join(text.split())


def _not_implemented(exc: ast.expr | None) -> bool:
    """``raise NotImplementedError(…)``: a combination not supported yet, which did not work before either (a new
    feature's limits: ``dynamic_eplb is not supported by model runner v2``), not a setting newly refused."""
    return isinstance(exc, ast.Call) and _owner(exc.func).rsplit(".", 1)[-1] == "NotImplementedError"


def _names(message: str, key: Key) -> bool:
    """Whether the message names the setting (as a word: ``additional_config.layer_sharding`` names it)."""
    return bool(re.search(rf"(?<![A-Za-z0-9_]){re.escape(key[1])}(?![A-Za-z0-9_])", message, re.IGNORECASE))


def _function(fn: ast.FunctionDef | ast.AsyncFunctionDef, found: dict[Key, Rejection], every: bool = False) -> None:
    """Each raise of one function with the setting that leads to it (``every``: also under each other setting its
    tests read that the message names, so a check reworded under another setting's test is known as the same)."""
    aliases: dict[str, Key] = {}
    keyed: dict[str, Key] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            for table, reads in ((aliases, _reads(node.value, {})), (keyed, _reads(node.value, {}, keyed=True))):
                if len(reads) == 1:
                    table.setdefault(node.targets[0].id, next(iter(reads)))

    def walk(body: list[ast.stmt], path: list[Step], passed: list[Step]) -> None:
        path, passed = list(path), list(passed)
        for stmt in body:
            if isinstance(stmt, ast.Raise):
                _record(stmt, path, passed)
            elif isinstance(stmt, ast.If):
                walk(stmt.body, [*path, (stmt.test, True)][:MAX_STEPS], passed)
                walk(stmt.orelse, [*path, (stmt.test, False)][:MAX_STEPS], passed)
                ends = stmt.body[-1] if stmt.body and not stmt.orelse else None
                if isinstance(ends, (ast.Return, ast.Continue)) and len(path) < MAX_STEPS:
                    # an early return: what follows runs only when it failed
                    path.append((stmt.test, False))
                elif isinstance(ends, ast.Raise) and len(passed) < MAX_STEPS:
                    # a check passed: what follows runs only when it failed too (``if p != "torch": raise`` then
                    # ``if envs.X: raise``: the second is reached with the torch profiler only). It is no setting
                    # of the next check: kept apart, after the tests on the way, so a run of checks stays linear
                    passed.append((stmt.test, False))
            elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try)):
                for part in ("body", "orelse", "finalbody"):
                    walk(getattr(stmt, part, []) or [], path, passed)
                for handler in getattr(stmt, "handlers", []):
                    walk(handler.body, path, passed)

    def _record(stmt: ast.Raise, path: list[Step], passed: list[Step]) -> None:
        message = _message(stmt.exc)
        if not message or _not_implemented(stmt.exc):
            return
        key = next((k for k in (_single(_reads(test, aliases)) for test, _ in path) if k is not None), None)
        if key is None or not _names(message, key):
            # a check of one key looked up on its way (``if not cfg.get("k"): return … raise``), named or not
            key = _single(set().union(*(_reads(test, keyed, keyed=True) for test, _ in path)))
        if key is None or _unknown_value(path, key, aliases) or _absence(path, key, aliases):
            return
        keys = {key}
        if every:
            keys |= {k for test, _ in path for k in _reads(test, aliases) if _names(message, k)}
        for each in keys:
            entry = found.setdefault(each, Rejection(message[:MAX_MESSAGE], stmt.lineno))
            entry.paths.append((path + passed)[:MAX_STEPS])
            entry.lines.append(stmt.lineno)
            entry.messages.add(message[:MAX_MESSAGE])

    walk(fn.body, [], [])


def _literal(node: ast.expr) -> bool:
    """A constant, or a tuple, list or set of constants (the values a dispatch handles)."""
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return all(isinstance(e, ast.Constant) for e in node.elts)
    return isinstance(node, ast.Constant)


def _value_test(test: ast.expr) -> bool:
    """``x == "a"``, ``x in ("a", "b")`` or an ``or`` of them: one branch of a dispatch on a setting's value."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        return all(_value_test(v) for v in test.values)
    return isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.In)) \
        and (_literal(test.comparators[0]) or _literal(test.left))


def _unknown_value(path: list[Step], key: Key, aliases: dict[str, Key]) -> bool:
    """The raise is the ``else`` of a dispatch on the setting's value (``if m == "a": … elif m in ("b", "c"): …
    else: raise ValueError("Unknown method")``): it refuses only values no branch handles, which did nothing
    before either, so it asks nothing of a reader (vllm-ascend #5437's 'Unknown speculative decoding method')."""
    steps = [(test, holds) for test, holds in path if _reads(test, aliases) == {key}]
    return bool(steps) and all(not holds and _value_test(test) for test, holds in steps)


def _unset(test: ast.expr, holds: bool) -> bool:
    """Whether a test that holds (``holds``) or fails says its setting is unset or empty: ``not x``, ``x is None``,
    ``x == ""`` holding, or a bare ``x`` failing."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _unset(test.operand, not holds)
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.comparators[0], ast.Constant) \
            and test.comparators[0].value in (None, ""):
        return holds == isinstance(test.ops[0], (ast.Is, ast.Eq))
    return not holds and not isinstance(test, (ast.Compare, ast.BoolOp))


def _absence(path: list[Step], key: Key, aliases: dict[str, Key]) -> bool:
    """The raise refuses leaving the setting unset or empty (``if not cfg.torch_profiler_dir: raise ValueError("…
    cannot be empty")``): it refuses no value a reader set, so there is nowhere to check (an environment variable
    required so is said as required: envchecks.py), and before the check an empty value did not work either."""
    if key[0] != "config":
        return False  # a variable's absence refused is said as required where envchecks.py reads it: kept as it was
    steps = [(test, holds) for test, holds in path if _reads(test, aliases) == {key}]
    return bool(steps) and all(_unset(test, holds) for test, holds in steps)


def _single(reads: set[Key]) -> Key | None:
    return next(iter(reads)) if len(reads) == 1 else None


def rejections(text: str | None, every: bool = False) -> dict[Key, Rejection]:
    """Every setting a check of ``text`` refuses, with its message and the paths to its raises (``every``: each
    check also under every setting its tests read that its message names)."""
    tree, _ = parse(text or "")
    found: dict[Key, Rejection] = {}
    if isinstance(tree, ast.Module):
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                _function(fn, found, every)
    return found


def _new_classes(before: str | None, after: str) -> list[tuple[int, int]]:
    """The line spans of the classes ``after`` defines that ``before`` did not (by name): a new model or backend."""
    def classes(text: str | None) -> list[ast.ClassDef]:
        tree, _ = parse(text or "")
        return [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)] if isinstance(tree, ast.Module) else []

    old = {c.name for c in classes(before)}
    return [(c.lineno, c.end_lineno or c.lineno) for c in classes(after) if c.name not in old]


def _atom(test: ast.expr) -> tuple[str, bool]:
    """A test as (what it asks, whether it is negated): ``x is not None`` is ``x is None`` negated."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        flip = {ast.IsNot: ast.Is, ast.NotEq: ast.Eq, ast.NotIn: ast.In}.get(type(test.ops[0]))
        if flip is not None:
            return ast.unparse(ast.Compare(test.left, [flip()], test.comparators)), True
    return ast.unparse(test), False


def _holds(test: ast.expr, case: dict[str, bool], named: dict[ast.expr, tuple[str, bool]]) -> bool:
    """Whether ``test`` holds when each atom is as ``case`` says (``named``: each atom's :func:`_atom`, kept)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return not _holds(test.operand, case, named)
    if isinstance(test, ast.BoolOp):
        values = (_holds(v, case, named) for v in test.values)
        return all(values) if isinstance(test.op, ast.And) else any(values)
    if test not in named:
        named[test] = _atom(test)
    name, negated = named[test]
    return case[name] != negated


def _atoms(test: ast.expr) -> set[str]:
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _atoms(test.operand)
    if isinstance(test, ast.BoolOp):
        return set().union(*(_atoms(v) for v in test.values))
    return {_atom(test)[0]}


def widened(before: list[list[Step]], after: list[list[Step]]) -> bool:
    """Whether the raises are reached in every case they were before and in some more."""
    def written(paths: list[list[Step]]) -> list[tuple[tuple[str, bool], ...]]:
        return sorted(tuple((ast.unparse(t), want) for t, want in path) for path in paths)

    if len(before) + len(after) > MAX_PATHS or written(before) == written(after):
        return False  # too many to tell, or the same tests as written: a file changed elsewhere
    atoms = sorted(set().union(*(_atoms(t) for path in (*before, *after) for t, _ in path)))
    if len(atoms) > MAX_ATOMS:
        return False  # too many tests to tell: claim nothing
    named: dict[ast.expr, tuple[str, bool]] = {}

    def reached(paths: list[list[Step]], case: dict[str, bool]) -> bool:
        return any(all(_holds(t, case, named) == want for t, want in path) for path in paths)

    more = False
    for values in itertools.product((False, True), repeat=len(atoms)):
        case = dict(zip(atoms, values))
        was, now = reached(before, case), reached(after, case)
        if was and not now:
            return False
        more = more or (now and not was)
    return more


def moved(facts: list[Change], befores: Iterable[tuple[str, str | None]]) -> list[Change]:
    """``facts`` without a check another changed file had before the commit, the same setting refused with the same
    message (a check moved from one module to another: ``_create_profiler`` out of ``worker.py`` into a new
    profiler module; another check of that setting is no move); ``befores`` are (path after the commit, text
    before) of the commit's Python files."""
    refused = [c for c in facts if c.detail == "rejected" and c.kind in ("env", "config")]
    if not refused:
        return facts
    old: dict[str, set[tuple[Kind, str, str]]] = {}
    for path, text in befores:
        if text and "raise" in text and any(c.symbol in text for c in refused):
            old[path] = {(kind, name, m) for (kind, name), r in rejections(text).items() for m in r.messages}
    return [c for c in facts if not (c in refused and any((c.kind, c.symbol, c.after) in checks
                                                          for path, checks in old.items() if path != c.path))]


def known_before(facts: Sequence[Change], parent: str | None, clone: UpstreamClone, surface: Surface) -> list[Change]:
    """``facts`` without a check of a setting the commit adds that no shipped module of the tree at ``parent``
    names (``dump_config`` read for the first time and validated as it comes: no reader has set it yet). The tree is
    read only when such a fact is there; the facts stand when it cannot be read."""
    added = {(c.kind, c.symbol) for c in facts if c.detail == "added" and c.kind in ("env", "config")}
    new = {c.symbol for c in facts if c.detail == "rejected" and (c.kind, c.symbol) in added}
    if not new or not parent:
        return list(facts)
    try:
        texts = tree_texts(clone, parent, lambda path: path.endswith(".py") and not surface.is_test(path))
    except GitUnavailable:
        return list(facts)
    named: set[str] = set()
    for text, _ in texts.values():
        named |= {n for n in new - named if text and re.search(rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])",
                                                               text)}
    return [c for c in facts if not (c.detail == "rejected" and c.symbol in new - named)]


def compare(path: str, before: str | None, after: str | None) -> list[Change]:
    """A fact for each setting a check of ``after`` newly refuses, or refuses in more setups than ``before``."""
    if not after or "raise" not in after:
        return []
    # A check the file had is known under each setting its message named, whichever test now leads to it (the
    # profiler's check reached through its new config instead of its variable is the same check, reworded).
    old = rejections(before, every=True)
    # A check inside a class the PR adds refuses nothing anyone ran: that model or backend is new (its limits).
    fresh = _new_classes(before, after)
    facts: list[Change] = []
    for key, new in rejections(after).items():
        paths = [p for p, line in zip(new.paths, new.lines) if not any(a <= line <= b for a, b in fresh)]
        if not paths or (key in old and not widened(old[key].paths, paths)):
            continue
        kind, name = key
        facts.append(Change(kind=kind, symbol=name, path=path, line=new.line, after=new.message, detail="rejected",
                            public=True, language="config"))
    return facts
