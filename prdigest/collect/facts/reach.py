"""Who can see a change: each fact's reach, ``public`` (what the repo exports, documents or requires of its
users) or ``internal`` (what only the repo itself uses), decided from the repository and said in the fact.

With a clone (``--git``) the tree at the merge commit is read: every package ``__init__`` (re-exports, lazy
``__getattr__`` tables), the changed module's own ``__all__`` and abstract base classes, the docs, examples and
READMEs, and the entry points of ``setup.py`` / ``pyproject.toml`` / ``setup.cfg``. A Python name none of those
name is internal: a rename of it breaks no reader. Without a clone only the PR's own files can tell, so a name
is internal only when the patches show it (a leading underscore, a private module, a test) and public
otherwise, said as such. Settings (environment variables, arguments, config fields) and runtime pins are
public by kind; tests, CI jobs, build variables and development requirements internal.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from prdigest.collect.facts import docpins, indexes
from prdigest.collect.facts.surface import Surface, module_name
from prdigest.collect.git import CommitDiff, GitUnavailable, UpstreamClone
from prdigest.collect.git.diff import blob_texts
from prdigest.kernel import safe_parse
from prdigest.kernel.models import Change, PullRequest

#: Kinds whose symbol is a Python name (``Scheduler.schedule``): their reach is the name's.
PYTHON_KINDS = frozenset({"added", "removed", "renamed", "moved", "signature", "abstract", "bases", "body",
                          "attribute", "returns", "passes"})
#: Requirement files users install from (not development, lint, test, docs or benchmark requirements).
_DEV_REQUIREMENTS = re.compile(r"(^|/)(tests?|docs?|benchmarks?|examples?|\.github|ci|tools?)/|"
                               r"requirements[-_/.]?(dev|lint|test|tests|docs?|bench\w*|ci|build)\b", re.IGNORECASE)
#: Folders of what the repository runs for itself (tests, CI, benchmarks, tooling), not what users install with.
_NOT_USERS = re.compile(r"(^|/)(tests?|benchmarks?|\.[^/]+|ci|tools?)/", re.IGNORECASE)
#: What users read: docs, examples, READMEs (translations' .po files say the same again).
_DOCS = re.compile(r"^(docs?|examples?)/.+\.(md|rst|txt|py|ya?ml|sh)$|(^|/)README[^/]*\.(md|rst)$", re.IGNORECASE)
#: Docs written for contributors name internals: they do not make a name something users see.
_CONTRIBUTOR_DOCS = re.compile(r"(^|/)(developer[_-]?guide|contributing|contribut\w*|design|internals?|dev)(/|\.)",
                               re.IGNORECASE)
_CODE_SPAN = re.compile(r"```.*?```|``[^`\n]+``|`[^`\n]+`", re.DOTALL)
#: A fenced block drawing a file tree (``├── spec_decode``), or quoting source: a ``def`` / ``class`` with no import.
_TREE_DRAWING = re.compile(r"[├└│]")
_DEFINES = re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+\w", re.MULTILINE)
_IMPORTS = re.compile(r"^[ \t]*(?:from[ \t]+[\w.]+[ \t]+)?import[ \t]", re.MULTILINE)
_QUOTED_BASES = re.compile(r"^[ \t]*class[ \t]+\w+[ \t]*\(([^)]*)\)", re.MULTILINE)
_IMPORTED = re.compile(r"^[ \t]*from\s+([\w.]+)\s+import\s+\(?([\w\s,]+)\)?|^[ \t]*import\s+([\w.]+)", re.MULTILINE)
_PACKAGING = re.compile(r"^(setup\.py|setup\.cfg|pyproject\.toml)$")
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_FILE_NAME = re.compile(r"[\w-]+\.(?:pyi?|sh|bash|md|rst|txt|ya?ml|json|toml|cfg|ini|cpp|cc|cu|cuh|hpp|h|c)\b")
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_ENTRY = re.compile(r"([A-Za-z_][\w.]*)\s*:\s*([A-Za-z_][\w.]*)")
_ABSTRACT_CLASS = re.compile(r"^class\s+([A-Za-z_]\w*)\s*\([^)]*\b(?:ABC|ABCMeta|Protocol)\b", re.MULTILINE)
#: A hidden top-level folder (``.agents/``, ``.github/``, ``.devcontainer/``): the maintainers' tooling.
_TOOLING = re.compile(r"^(\.[^/.][^/]*)/")
#: Scripts users may be told to run (``bash tools/install_ops.sh``): public when the docs name them.
_SCRIPTS = (".sh", ".bash")
#: Files read per commit for the evidence at most (a huge docs tree is read in part, said by the count).
MAX_EVIDENCE_FILES = 4_000


@dataclass
class Evidence:
    """What the tree (or, without one, the PR) says users see: each name with the file that says it."""

    #: Names a package ``__init__`` imports, lists in ``__all__`` or maps lazily, with every such ``__init__``.
    exported: dict[str, list[str]] = field(default_factory=dict)
    #: Names (and dotted module paths) the docs, examples and READMEs write, by the first file that does.
    documented: dict[str, str] = field(default_factory=dict)
    #: Modules and names entry points load (``vllm_ascend:register``), by the packaging file.
    entry_points: dict[str, str] = field(default_factory=dict)
    #: True when read from the whole tree; False for what one PR's patches show.
    whole_tree: bool = True
    #: Every dotted prefix of what the docs and entry points name (``a.b.c`` → ``a``, ``a.b``, ``a.b.c``), once.
    _named_packages: frozenset[str] | None = field(default=None, repr=False, compare=False)

    def reaches(self, init: str) -> bool:
        """Whether users reach the package whose ``__init__`` is ``init``: a top-level package, or one the docs
        or entry points name (itself or a module under it). A sub-package's re-exports are a convenience for the
        repository's own code (``worker.v2.spec_decode``) until something users read leads there."""
        package = module_name(init)
        if not self.whole_tree or "." not in package:
            return True
        if self._named_packages is None:
            prefixes: set[str] = set()
            for name in (*self.documented, *self.entry_points):
                parts = name.split(".")
                prefixes.update(".".join(parts[:i]) for i in range(2, len(parts) + 1))
            self._named_packages = frozenset(prefixes)
        return package in self._named_packages


def _init_names(text: str) -> set[str]:
    """The names a package ``__init__`` makes importable: what it imports or defines, ``__all__``, and the
    identifiers of its string constants (lazy import tables such as ``"vllm.entrypoints.llm:LLM"``)."""
    tree, _ = safe_parse.parse(text, filename="__init__.py", max_depth=0)
    if not isinstance(tree, ast.Module):  # not Python, too large or nested too deep: its words stand for its names
        return set(_TOKEN.findall(text))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names.update(a.asname or a.name for a in node.names)
            if node.module:
                names.update(node.module.split("."))
        elif isinstance(node, ast.Import):  # ``import a.b.c`` runs a module for its effects; only an alias names
            names.update(a.asname for a in node.names if a.asname)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node in tree.body:
            names.add(node.name)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 200:
            names.update(_TOKEN.findall(node.value))
    return {n for n in names if not n.startswith("_")}


def doc_names(path: str, text: str) -> frozenset[str]:
    """The code names a doc or example gives users: in prose files, what is written as code (backticks, fenced
    blocks); in example scripts, what they import (a word of prose or a local variable is no evidence)."""
    if path.endswith(".py"):
        names: set[str] = set()
        for match in _IMPORTED.finditer(text):
            module = match[1] or match[3]
            names.add(module)
            for name in (match[2] or "").replace("\n", ",").split(","):
                if name.strip():
                    names.update((name.strip().split()[0], f"{module}.{name.strip().split()[0]}"))
        return frozenset(names)
    spans = " ".join(_users_code(span) for span in _CODE_SPAN.findall(text)) if path.endswith((".md", ".rst")) \
        else text
    # ``rejection_sample.py`` in a doc's file tree names a file (kept whole, for scripts and modules), not the
    # function ``rejection_sample`` it may define
    return frozenset(_TOKEN.findall(_FILE_NAME.sub(" ", spans))) | frozenset(_DOTTED.findall(spans))


def _users_code(span: str) -> str:
    """What of a doc's code span users write: a fenced block that draws the repository's file tree (``├──
    mtp_proposer.py``) or quotes its own source (a ``def`` or ``class`` and no import: ``def
    get_spec_decode_method(…): return MtpProposer(…)`` under "How it works") explains the internals, so only the
    bases of the classes it quotes stay (a plugin guide's ``class MyProposer(Proposer):`` names a base to subclass)."""
    if not span.startswith("```"):
        return span
    if _TREE_DRAWING.search(span):
        return ""
    if _DEFINES.search(span) and not _IMPORTS.search(span):
        return " ".join(m[1] for m in _QUOTED_BASES.finditer(span))
    return span


def _module_all(text: str | None) -> set[str]:
    """The strings of a module's ``__all__ = [...]``."""
    if not text or "__all__" not in text:
        return set()
    found: set[str] = set()
    for match in re.finditer(r"__all__\s*(?:\+?=|:\s*[^=]+=)\s*[\[(]([^\])]*)[\])]", text):
        found.update(re.findall(r"[\"']([A-Za-z_]\w*)[\"']", match[1]))
    return found


class TreeReader:
    """Reads the evidence of each merge commit's tree from a clone, each blob once for the whole run."""

    def __init__(self, clone: UpstreamClone, surface: Surface) -> None:
        self.clone, self.surface = clone, surface
        self._tokens: dict[str, frozenset[str]] = {}
        self._inits: dict[str, frozenset[str]] = {}
        self._entries: dict[str, frozenset[tuple[str, str]]] = {}
        #: Each tree's evidence: a week's commits follow one another, so one's parent is the one before.
        self._trees: dict[str, Evidence | None] = {}

    def of(self, diff: CommitDiff) -> Evidence | None:
        """The evidence of the trees before and after a commit: a name removed was public if it was exported."""
        found, before = self.at(diff.sha), self.at(diff.parent) if diff.parent else None
        if found is None or before is None:
            return found or before
        after = Evidence({k: list(v) for k, v in found.exported.items()}, dict(found.documented),
                         dict(found.entry_points))  # a copy: the trees' evidence is kept for the next commit
        for name, paths in before.exported.items():
            after.exported.setdefault(name, []).extend(p for p in paths if p not in after.exported[name])
        for mine, theirs in ((after.documented, before.documented), (after.entry_points, before.entry_points)):
            for name, path in theirs.items():
                mine.setdefault(name, path)
        return after

    def at(self, sha: str) -> Evidence | None:
        """The evidence of the tree at ``sha``; None when git cannot list it (the facts keep their reach)."""
        if sha not in self._trees:
            self._trees[sha] = self._read_tree(sha)
        return self._trees[sha]

    def _read_tree(self, sha: str) -> Evidence | None:
        try:
            listing = self.clone.run(["ls-tree", "-r", "--full-tree", sha], what="ls-tree").decode("utf-8", "replace")
        except GitUnavailable:
            return None
        files: list[tuple[str, str]] = []
        for line in listing.splitlines():
            meta, _, path = line.partition("\t")
            parts = meta.split()
            if len(parts) == 3 and parts[1] == "blob" and self._wanted(path):
                files.append((parts[2], path))
        files = files[:MAX_EVIDENCE_FILES]
        self._read({oid: path for oid, path in files})
        evidence = Evidence()
        for oid, path in sorted(files, key=lambda f: f[1]):
            if path.endswith("__init__.py"):
                for name in self._inits.get(oid, ()):
                    evidence.exported.setdefault(name, []).append(path)
            elif _PACKAGING.match(path):
                for module, attr in self._entries.get(oid, ()):
                    for name in (module, *module.split("."), attr):
                        evidence.entry_points.setdefault(name, path)
            else:
                for name in self._tokens.get(oid, ()):
                    evidence.documented.setdefault(name, path)
        return evidence

    def _wanted(self, path: str) -> bool:
        if self.surface.is_test(path) or path.endswith(".po") or _CONTRIBUTOR_DOCS.search(path) or _TOOLING.match(path):
            return False  # a README in ``.agents/`` is written for the maintainers' agents, not for users
        return path.endswith("/__init__.py") or path == "__init__.py" \
            or bool(_DOCS.search(path) or _PACKAGING.match(path))

    def _read(self, paths: dict[str, str]) -> None:
        todo = {o for o in paths if o not in self._tokens and o not in self._inits and o not in self._entries}
        if not todo:
            return
        if self.clone.partial:
            self.clone.fetch_blobs(todo)
        try:
            texts = blob_texts(self.clone, todo)
        except GitUnavailable:
            texts = {}
        for oid in todo:
            text = (texts.get(oid) or (None, ""))[0] or ""
            self._tokens[oid] = doc_names(paths.get(oid, ""), text)
            self._inits[oid] = frozenset(_init_names(text)) if "import" in text or "__all__" in text else frozenset()
            self._entries[oid] = frozenset(_ENTRY.findall(text)) if "entry" in text else frozenset()


def pr_evidence(pr: PullRequest) -> Evidence:
    """What the PR's own patches show users see: the lines its package ``__init__`` and docs files add or keep."""
    evidence = Evidence(whole_tree=False)
    for f in pr.files:
        if not f.patch:
            continue
        lines = "\n".join(line[1:] for line in f.patch.splitlines() if line[:1] in ("+", " ", "-"))
        if f.path.endswith("__init__.py"):
            for name in _TOKEN.findall(lines):
                if not name.startswith("_"):
                    evidence.exported.setdefault(name, []).append(f.path)
        elif _DOCS.search(f.path) and not _CONTRIBUTOR_DOCS.search(f.path) and not _TOOLING.match(f.path):
            for name in doc_names(f.path, lines):
                evidence.documented.setdefault(name, f.path)
    return evidence


def user_doc(path: str) -> bool:
    """Whether ``path`` is a page of the user docs, an example or a README users read (not a contributor page, nor
    the maintainers' tooling)."""
    return bool(_DOCS.search(path)) and not _CONTRIBUTOR_DOCS.search(path) and not _TOOLING.match(path) \
        and not path.endswith(".po")


def runtime_pin_file(path: str) -> bool:
    """Whether a pin in ``path`` is something users install with (requirements, pyproject, setup.py, a
    Dockerfile, a toolchain version file), not a development or CI requirement."""
    return not _DEV_REQUIREMENTS.search(path)


_SUBCLASS = re.compile(r"^class\s+([A-Za-z_]\w*)\s*\(\s*([A-Za-z_][\w.]*)", re.MULTILINE)
_NOT_A_BASE = frozenset({"object", "ABC", "Protocol", "Generic", "NamedTuple", "TypedDict", "Enum", "IntEnum", "str",
                         "int", "Exception"})

Shapes = dict[str, tuple[set[str], set[str], dict[str, str]]]


def _alls(diff: CommitDiff | None) -> Shapes:
    """Each changed Python file's ``__all__``, abstract classes, and the first base of each class that has one
    (after the change: a method removed there may still be inherited)."""
    out: Shapes = {}
    for f in diff.files if diff is not None else ():
        if f.path.endswith((".py", ".pyi")) or f.before_path.endswith((".py", ".pyi")):
            texts = [t for t in (f.before, f.after) if t]
            bases = {m[1]: m[2] for m in _SUBCLASS.finditer(f.after or "")
                     if m[2].rsplit(".", 1)[-1] not in _NOT_A_BASE}
            shape = (set().union(*map(_module_all, texts)) if texts else set(),
                     {m for t in texts for m in _ABSTRACT_CLASS.findall(t)}, bases)
            out[f.path] = out[f.before_path] = shape
    return out


def classify(facts: Sequence[Change], surface: Surface, evidence: Evidence | None,
             diff: CommitDiff | None = None) -> list[Change]:
    """``facts`` with their reach and how it was decided (:class:`Evidence` None: patches without evidence)."""
    alls = _alls(diff)
    return [f.model_copy(update=dict(zip(("reach", "reach_how"), _reach(f, surface, evidence, alls))))
            for f in facts]


def _python_names(c: Change) -> list[str]:
    names = [c.symbol]
    if c.kind == "renamed" and c.before and c.before != c.symbol:
        names.append(c.before)
    return names


def _private(c: Change) -> str:
    """Why a Python fact is private as written, or ""."""
    for name in _python_names(c):
        if any(part.startswith("_") and not part.startswith("__") for part in name.split(".")):
            return f"a private name (`{name}`: leading underscore)"
    module = module_name(c.path)
    if any(part.startswith("_") and not part.startswith("__") for part in module.split(".")):
        return f"a private module (`{module}`)"
    if not c.public:
        return f"a private name (`{c.symbol}`)"
    return ""


def _from_above(c: Change) -> bool:
    """Whether a re-export fact's name came from a package above the ``__init__`` that imported it (or from
    ``..``): a name that package uses, not one it offers from below."""
    source = c.before.rsplit(".", 1)[0] if "." in c.before else ""
    if source.startswith(".."):
        return True
    package = module_name(c.path)
    return bool(source) and not source.startswith(".") and package.startswith(source + ".")


def _packages(path: str) -> list[str]:
    """The ``__init__.py`` of every package above ``path``, nearest first (``a/b/c.py`` → ``a/b/…``, ``a/…``)."""
    parts = path.split("/")[:-1]
    return [("/".join(parts[:i]) + "/__init__.py") for i in range(len(parts), 0, -1)]


def _said(names: Iterable[str], evidence: Evidence, path: str) -> str:
    """Where the evidence names one of ``names`` as something users see, or "": a package ``__init__`` above
    ``path`` that imports it, an entry point, the docs."""
    above = _packages(path)
    for name in names:
        inits = [p for p in evidence.exported.get(name, ())
                 if (p in above and evidence.reaches(p)) or not evidence.whole_tree]
        if inits:
            return f"re-exported by `{inits[0]}`"
        if name in evidence.entry_points:
            return f"an entry point in `{evidence.entry_points[name]}`"
        if name in evidence.documented and distinctive(name):
            return f"named in `{evidence.documented[name]}`"
    return ""


def distinctive(name: str) -> bool:
    """A name the docs can only mean as code: dotted, snake_case, CamelCase or a capitalised class name
    (``init_speculator``, ``FusedMoE``, ``Runner``); a plain word (``main``, ``args``, ``status``) or a
    three-letter one (``Max``) in a doc's code span names something else far more often than the function of
    that name in some script."""
    return ("." in name or "_" in name.strip("_") or len(re.findall(r"[A-Z][a-z0-9]*", name)) >= 2
            or (name[:1].isupper() and len(name) >= 4))


def _reach(c: Change, surface: Surface, evidence: Evidence | None, alls: Shapes) -> tuple[str, str]:
    if c.kind in ("tests", "ci", "build"):
        return "internal", {"tests": "a test", "ci": "a CI job", "build": "a build variable"}[c.kind]
    if surface.is_test(c.path):
        return "internal", f"a test file (`{c.path}`)"
    tooling = _TOOLING.match(c.before if c.kind == "file-renamed" and c.before else c.path)
    if tooling and c.kind != "dependency":
        # Hidden folders hold the maintainers' tooling (agent skills, editor and CI set-up), not what users import.
        return "internal", f"the repository's own tooling (`{tooling[1]}/`)"
    if indexes.is_index(c):
        if _NOT_USERS.search(c.path) or _CONTRIBUTOR_DOCS.search(c.path):
            return "internal", f"an index for development or CI (`{c.path}`)"
        return "public", f"an index users install from (`{c.path}`)"
    if c.kind == "deprecated":
        # A repository deprecates (rather than just changes) what others use: the notice is addressed to them.
        module = module_name(c.path)
        if any(p.startswith("_") and not p.startswith("__") for p in module.split(".")):
            return "internal", f"a private module (`{module}`)"
        if _CONTRIBUTOR_DOCS.search(c.path) or _NOT_USERS.search(c.path):
            return "internal", f"a page for contributors or the repository's tooling (`{c.path}`)"
        return "public", "a deprecation announced to its users"
    if c.kind == "dependency":
        if c.detail == "support dropped":  # prdigest/collect/facts/versiongates.py
            return "public", f"a release of `{c.symbol}` the shipped code no longer supports"
        if docpins.is_doc(c.path) and not _CONTRIBUTOR_DOCS.search(c.path) and not _TOOLING.match(c.path):
            return "public", f"an install command of the user docs (`{c.path}`)"
        if runtime_pin_file(c.path):
            return "public", f"a runtime requirement (`{c.path}`)"
        return "internal", f"a development or CI requirement (`{c.path}`)"
    if c.kind in ("env", "argument", "config") and c.detail == "no longer rewritten" and evidence is not None \
            and evidence.whole_tree and c.symbol not in evidence.documented:
        # a value the code stopped rewriting changes a default only for a setting users set: one the docs name
        return "internal", f"a setting no user doc names (`{c.symbol}`): the code's own"
    if c.kind == "config" and c.detail == "default" and "." in c.symbol and evidence is not None \
            and evidence.whole_tree and c.symbol.rsplit(".", 1)[-1] not in evidence.documented:
        # a config class's field (prdigest/collect/facts/defaults.py) users set only where the docs tell them to: an
        # internal pass's switch no page names is the code's own default
        return "internal", f"a field of `{c.symbol.rsplit('.', 1)[0]}` no user doc names: the code's own default"
    if c.kind in ("env", "argument", "config"):
        return "public", {"env": "an environment variable the code reads", "argument": "a command-line or engine "
                          "argument", "config": "a configuration field users set"}[c.kind]
    if c.kind in ("file-deleted", "file-renamed"):
        return _file_reach(c, evidence)
    if c.kind == "kernel":
        found = _said([c.symbol], evidence, c.path) if evidence else ""
        return ("public", found) if found else ("internal", "a kernel only the repository's own code calls")
    private = _private(c)
    if private:
        return "internal", private
    if c.kind == "removed" and c.detail == "re-export removed" and _from_above(c):
        # `from pkg import envs` in `pkg/sub/__init__.py` uses a module of a package above; nobody imports it from
        # `pkg.sub`, and it is still where users import it from.
        return "internal", f"an import `{c.path}` took from a package above it (`{c.before}`), still there"
    top = [n.split(".", 1)[0] for n in _python_names(c)]
    last = [n.rsplit(".", 1)[-1] for n in _python_names(c)]
    listed, abstract, bases = alls.get(c.path, (set(), set(), {}))
    if c.path.endswith("__init__.py") and (evidence is None or evidence.reaches(c.path)):
        return "public", f"defined in the package's `{c.path}`"
    if any(t in listed for t in top) and _reached(c.path, evidence):
        return "public", f"listed in `__all__` of `{c.path}`"
    if any(t in abstract for t in top):
        # Its methods are the contract of whoever subclasses it: users, when the tree leads them to the class (a
        # package they reach exports it, the docs or entry points name it); else only the repository's own code.
        said = _said(top, evidence, c.path) if evidence is not None and evidence.whole_tree else ""
        if said or evidence is None or not evidence.whole_tree:
            return "public", f"an abstract base class of `{c.path}`{f' ({said})' if said else ''}, meant to be " \
                             "subclassed"
        return "internal", (f"an abstract base class of `{c.path}` that no package users reach exports and no doc "
                            "or entry point names: subclassed inside the repository")
    method = any("." in n for n in _python_names(c)) and c.kind != "moved"
    if method and c.kind == "removed" and top[0] in bases:
        return "internal", (f"a method of `{top[0]}`, a subclass of `{bases[top[0]]}`: callers may still "
                            "reach the base's")
    if evidence is not None:
        found = _said(top, evidence, c.path)
        if found and not method:
            return "public", found
        # A method is the contract of an abstract base (above), or public where the docs name it with its class.
        named = next((n for n in (*_python_names(c), *last) if n in evidence.documented and distinctive(n)), "")
        if found and named:
            return "public", f"`{named}` is named in `{evidence.documented[named]}`"
        if found:
            return "internal", f"a method of `{top[0]}` ({found}) that no doc names"
    if evidence is None or not evidence.whole_tree:
        return "public", "from the patches alone (no clone): not shown to be internal"
    return "internal", "not exported, documented nor an entry point: used only inside the repository"


def _reached(path: str, evidence: Evidence | None) -> bool:
    """Whether users reach the module at ``path`` (or the package above it): a sub-package's ``__all__`` that no
    doc or entry point leads to (``quantization.methods``) lists names for the repository's own star imports."""
    if evidence is None or not evidence.whole_tree:
        return True
    return evidence.reaches(path) or any(evidence.reaches(p) for p in _packages(path)[:1])


def _file_reach(c: Change, evidence: Evidence | None) -> tuple[str, str]:
    path = c.before or c.path
    if path.endswith(_SCRIPTS) and evidence is not None:
        named = next((n for n in (path, path.rsplit("/", 1)[-1]) if n in evidence.documented), "")
        if named:
            return "public", f"a script users run, named in `{evidence.documented[named]}`"
    if not path.endswith((".py", ".pyi")):
        if "Dockerfile" in path.rsplit("/", 1)[-1] or re.search(r"(^|/)requirements[^/]*\.txt$", path):
            if runtime_pin_file(path):
                return "public", f"a file users build or install from (`{path}`)"
        return "internal", "not a Python module"
    module = module_name(path)
    if any(p.startswith("_") and not p.startswith("__") for p in module.split(".")):
        return "internal", f"a private module (`{module}`)"
    if evidence is None:
        return "public", "from the patches alone (no clone): not shown to be internal"
    parent = _packages(path)[:1]
    found = ("re-exported by `" + parent[0] + "`" if parent and parent[0] in evidence.exported.get(
        module.rsplit(".", 1)[-1], ()) and evidence.reaches(parent[0]) else _said([module], evidence, path))
    if found:
        return "public", f"the module is {found}"
    if not evidence.whole_tree:
        return "public", "from the patches alone (no clone): not shown to be internal"
    return "internal", "a module no package `__init__`, doc or entry point names"
