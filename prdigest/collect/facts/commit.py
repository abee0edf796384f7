"""Every fact of one merge commit, from the full text of each changed file before and after: the Python API,
the configuration surface, dependency pins, C++/CUDA functions and kernels, Triton and Pallas kernels, deleted and
renamed files, tests, CI jobs and CMake variables."""

from __future__ import annotations

import logging
import re

from prdigest.collect.facts import (
    bodyaspects,
    build,
    compatreads,
    configkeys,
    configmoves,
    constructors,
    defaults,
    deprecations,
    docpins,
    envchecks,
    envreads,
    envsetup,
    hierarchy,
    hooks,
    implements,
    indexes,
    inheritors,
    installers,
    kernels,
    migrations,
    newhooks,
    overrides,
    pins,
    pyapi,
    pykernels,
    reexporters,
    registered,
    registries,
    rejections,
    rpcnames,
    settings,
    syspackages,
    toolchain,
    treekept,
    versiongates,
)
from prdigest.collect.facts.reading import named
from prdigest.collect.facts.surface import Surface, module_name
from prdigest.collect.git import CommitDiff, FileDiff
from prdigest.collect.git.diff import MAX_BLOB
from prdigest.kernel import safe_parse
from prdigest.kernel.actions import NEW_FILE
from prdigest.kernel.factlines import unique
from prdigest.kernel.models import Change

log = logging.getLogger(__name__)

#: Bump when a fact changes for the same two files: cached facts of an older version are computed again.
FACTS_VERSION = "40"


def _python(path: str) -> bool:
    return path.endswith((".py", ".pyi"))


def commit_facts(diff: CommitDiff, surface: Surface, *, receivers: bool = True,
                 tree: hierarchy.UpstreamTree | None = None) -> list[Change]:
    """The facts of one commit, file by file, with moves between its modules matched across files
    (``receivers=False``: who passes a new parameter by the earlier rule, by the method's name alone, for the
    benchmark's comparison; see pyapi.passed_parameters; ``tree``: the upstream's whole tree, where methods are
    resolved through bases in modules the commit did not change)."""
    facts: list[Change] = []
    after_modules: dict[str, pyapi.Module | None] = {}
    module_of: dict[str, str] = {}
    parsed: dict[str, pyapi.Module] = {}
    parsed_before: dict[str, pyapi.Module] = {}
    for f in diff.files:
        facts.extend(file_facts(f, surface, after_modules, module_of, parsed, parsed_before))
    facts = _kept_modules(diff, facts, after_modules, parsed)
    facts = pykernels.put_to_use(facts, [(f.path, f.before, f.after) for f in diff.files
                                         if _python(f.path) and not surface.is_test(f.path)])
    facts = rejections.moved(facts, ((f.path, f.before) for f in diff.files if _python(f.before_path)))
    texts = {f.path: f.after for f in diff.files if f.path in parsed and f.after}
    facts = pyapi.inherited(facts, parsed)
    facts = pyapi.passed_parameters(facts, parsed, texts, receivers=receivers)
    facts = pyapi.attribute_reach(facts, parsed, texts)
    sides = {f.path: (f.before, f.after) for f in diff.files if f.path in parsed}
    sides.update({f.before_path: (f.before, f.after) for f in diff.files if f.before_path in parsed_before})
    facts = pyapi.new_keywords(facts, parsed_before, parsed, sides, module_of)
    facts = bodyaspects.described(facts, {p: s for p, s in sides.items() if not surface.is_test(p)})
    facts = constructors.by_name(facts, parsed, texts, diff, tree, surface.packages)
    facts = hooks.with_needed_by(facts, diff, tree, surface.packages)
    facts = newhooks.with_sets(facts, parsed, diff, tree, surface.packages)
    facts = rpcnames.with_rpc_obligations(facts, diff, tree, surface.packages)
    facts = _kept_keys(facts, parsed)
    if any(c.kind == "config" and c.detail == "removed" for c in facts):  # a key gone here may live on nested
        pages = [(f.path, f.before, f.after) for f in diff.files]
        facts = configmoves.moved(facts, configmoves.doc_moves(pages), configmoves.nested_keys(parsed.values()),
                                  configmoves.table_moves(pages))
    facts = hierarchy.across_modules(pyapi.moves(facts, after_modules, module_of), diff, tree, surface.packages)
    facts = treekept.tree_kept(facts, tree, diff.sha)
    facts = reexporters.with_reexporters(inheritors.with_inheritors(facts, diff, tree), diff, tree)
    facts = registered.with_registered(facts, diff, tree, surface.packages)
    facts = implements.implementing(facts, {p: t for p, t in texts.items() if not surface.is_test(p)})
    return unique(facts, key=lambda f: (f.kind, f.symbol, f.path, f.detail))


def _kept_keys(facts: list[Change], parsed: dict[str, pyapi.Module]) -> list[Change]:
    """Settings read in one file and no longer in another were moved, not added and removed: both go; so does a
    config key one file stops reading that another changed file still reads after the commit (without a clone
    those files are all that can tell; with one, the whole tree is asked: configkeys.still_read)."""
    added = {(c.kind, c.symbol) for c in facts if c.kind in ("config", "env") and c.detail == "added"}
    removed = {(c.kind, c.symbol) for c in facts if c.kind in ("config", "env") and c.detail == "removed"}
    read = {k for m in parsed.values() for k in configkeys.config_keys(m)} if any(
        kind == "config" for kind, _ in removed) else set()
    moved = (added & removed) | {("config", k) for kind, k in removed if kind == "config" and k in read}
    if not moved:
        return facts
    return [c for c in facts if (c.kind, c.symbol) not in moved or c.detail not in ("added", "removed")]


def _kept_modules(diff: CommitDiff, facts: list[Change], after_modules: dict[str, pyapi.Module | None],
                  parsed: dict[str, pyapi.Module]) -> list[Change]:
    """A module turned into a package (``m.py`` deleted, ``m/__init__.py`` added) is not deleted: the import
    still works; its names are compared with what the package's ``__init__`` defines or re-exports."""
    added = {module_name(f.path): f.path for f in diff.files if f.status == "A" and _python(f.path)}
    # a rename (git pairs m.py with m/x.py when most of it went there) leaves the module as well
    kept = {f.before_path for f in diff.files if f.status in ("D", "R") and _python(f.before_path)
            and module_name(f.before_path) in added}
    package: dict[str, pyapi.Module | None] = {module_name(p): parsed.get(added[module_name(p)]) for p in kept}
    for path in kept:
        after_modules[path] = package[module_name(path)]
    out = []
    for f in facts:
        if f.kind in ("file-deleted", "file-renamed") and f.before in kept:
            continue
        init = package.get(f.before) if f.kind == "moved" and not f.detail else None
        if init is not None and f.symbol in init.imported:  # the package's __init__ still re-exports it
            f = f.model_copy(update={"detail": "re-exported"})
        out.append(f)
    return out


def file_facts(f: FileDiff, surface: Surface, after_modules: dict[str, pyapi.Module | None],
               module_of: dict[str, str], parsed: dict[str, pyapi.Module] | None = None,
               parsed_before: dict[str, pyapi.Module] | None = None) -> list[Change]:
    """The facts of one changed file (``after_modules``/``module_of`` collect what moves are matched on,
    ``parsed`` the file's parsed after-version, where upstream call sites are looked for, ``parsed_before``
    its version before, by its old path)."""
    facts: list[Change] = []
    old_path = f.before_path
    if f.status == "D":
        facts.append(Change(kind="file-deleted", symbol=f.path, path=f.path, before=f.path, language="text",
                            public=not surface.is_test(f.path)))
    elif f.status == "R":
        facts.append(Change(kind="file-renamed", symbol=f.path, path=f.path, before=old_path, after=f.path,
                            language="text", public=not surface.is_test(f.path)))
    if f.skipped:
        if f.skipped == "too large" and (_python(f.path) or _python(old_path)):
            # A module git did not read for its size is named like one refused for its depth (_name_refused).
            log.warning("%s: skipped for code facts: too large to read (over %s bytes)", named(f.path),
                        f"{MAX_BLOB:,}")
        return facts
    if _python(f.path) or _python(old_path):
        facts.extend(_python_facts(f, surface, after_modules, module_of, parsed, parsed_before))
        if not (surface.is_test(f.path) or f.status == "D"):
            deprecated = deprecations.compare(f.path, f.before, f.after)
            facts.extend(deprecated)
            facts.extend(compatreads.compare(f.path, f.after, deprecated))
            facts.extend(envchecks.compare(f.path, f.before, f.after))
            facts.extend(versiongates.compare(f.path, f.before, f.after))
            facts.extend(overrides.compare(f.path, f.before, f.after))
            said = {(c.kind, c.symbol) for c in facts}  # an env file's rename is said once, as that setting
            facts.extend(c for c in envreads.compare(f.path, f.before, f.after) if (c.kind, c.symbol) not in said)
    elif kernels.is_kernel_file(f.path) and not surface.is_test(f.path):
        facts.extend(kernels.compare(f.path, f.before, f.after, before_path=old_path))
    if pins.is_pin_file(f.path):
        facts.extend(pins.compare(f.path, f.before, f.after, before_path=old_path))
    if build.is_build_file(f.path) or build.is_build_file(old_path):
        facts.extend(build.compare(f.path, f.before, f.after, before_path=old_path))
    toolchain_facts: list[Change] = []
    if toolchain.is_toolchain_file(f.path) or toolchain.is_toolchain_file(old_path):
        toolchain_facts += toolchain.compare(f.path, f.before, f.after, before_path=old_path)
    if indexes.is_index_file(f.path):
        toolchain_facts += indexes.compare(f.path, f.before, f.after, before_path=old_path)
    if docpins.is_doc(f.path):  # a version the install commands readers copy now give; settings migrating
        toolchain_facts += docpins.compare(f.path, f.before, f.after)
        toolchain_facts += installers.compare(f.path, f.before, f.after)  # a vendor's .run a page downloads
        toolchain_facts += envsetup.compare(f.path, f.before, f.after)  # a setup line readers run, replaced
        if not surface.is_test(f.path):
            facts.extend(migrations.compare(f.path, f.before, f.after))
    if toolchain.is_dockerfile(f.path):  # a system package the image now installs
        toolchain_facts += syspackages.compare(f.path, f.before, f.after)
    if f.before is None and toolchain.is_toolchain_file(f.path):
        # a new image (a Dockerfile for new hardware): what it pins is a new way to build, not a requirement that
        # moved under anyone who builds main today (kernel/actions.py asks nothing of NEW_FILE pins)
        toolchain_facts = [c.model_copy(update={"detail": NEW_FILE}) if c.kind == "dependency" else c
                           for c in toolchain_facts]
    return facts + toolchain_facts


def _python_facts(f: FileDiff, surface: Surface, after_modules: dict[str, pyapi.Module | None],
                  module_of: dict[str, str], parsed: dict[str, pyapi.Module] | None = None,
                  parsed_before: dict[str, pyapi.Module] | None = None) -> list[Change]:
    old_path = f.before_path
    if surface.is_test(f.path) or surface.is_test(old_path):
        # Test names are all a test file tells; reading them off the lines is 20 times cheaper than parsing.
        return _test_facts(f.before, f.after, f.path, old_path)
    wanted = [surface.is_api(p) or surface.is_env_file(p) or surface.is_argument_file(p) or surface.is_config_file(p)
              for p in (f.path, old_path)]
    if not any(wanted) and not surface.argument_classes:
        return []  # an example, a benchmark, a build script: nothing public to read
    before = pyapi.parse(f.before) if f.before is not None else None
    after = pyapi.parse(f.after) if f.after is not None else None
    if (f.before is not None and before is None) or (f.after is not None and after is None):
        _name_refused(f, before is None and f.before is not None, after is None and f.after is not None)
        return []  # one side is not valid Python: nothing can be said of its names
    if parsed is not None and after is not None:
        parsed[f.path] = after
    if parsed_before is not None and before is not None:
        parsed_before[old_path] = before
    facts: list[Change] = []
    api = surface.is_api(f.path) or surface.is_api(old_path)
    if api:
        module_of[f.path] = module_name(f.path)
        module_of[old_path] = module_name(old_path)
        after_modules[old_path] = after if f.status != "R" else None  # the old module, for re-exports
        if f.status == "R" and before is not None and after is not None:
            facts.extend(_renamed_module(before, after, f.path, old_path))
        # kernels of a Python kernel language (Triton, Pallas) said as kernels: added, launch, numerics
        facts.extend(pykernels.facts(f.path, f.before, f.after, pyapi.compare(before, after, f.path,
                                                                              before_path=old_path),
                                     before_path=old_path))
        # what no name's signature shows: a new registry of classes, a module-level container of another kind
        facts.extend(registries.registry_facts(before, after, f.path))
        facts.extend(registries.retyped_facts(before, after, f.path))
    if surface.is_env_file(f.path) or surface.is_env_file(old_path):
        facts.extend(settings.compare(settings.environment(before) if before else {},
                                      settings.environment(after) if after else {}, f.path, before_path=old_path))
    argument_file = surface.is_argument_file(f.path) or surface.is_argument_file(old_path)
    if argument_file or surface.argument_classes:
        facts.extend(settings.compare(
            settings.arguments(before, surface, argument_file=argument_file) if before else {},
            settings.arguments(after, surface, argument_file=argument_file) if after else {}, f.path,
            before_path=old_path))
    if api:  # keys read from a config mapping users fill (``additional_config.get("key", default)``)
        facts.extend(settings.compare(configkeys.config_keys(before) if before else {},
                                      configkeys.config_keys(after) if after else {}, f.path, before_path=old_path))
    if surface.is_config_file(f.path) or surface.is_config_file(old_path):
        facts.extend(settings.compare(settings.config_fields(before, surface) if before else {},
                                      settings.config_fields(after, surface) if after else {}, f.path,
                                      before_path=old_path))
    if api:  # an on/off default flipped where no declared surface looks (a config class, os.getenv, add_argument)
        seen = {(s.kind, s.symbol) for s in facts}
        facts.extend(s for s in defaults.flips(before, after, f.path, surface) if (s.kind, s.symbol) not in seen)
    # A field of an argument or config class is said once, as that setting.
    settled = {s.symbol for s in facts if s.kind in ("env", "argument", "config")}
    classes = {s.rpartition(".")[0] for s in settled}
    return [s for s in facts if not (s.kind == "attribute" and s.symbol in settled)
            and not (s.kind == "signature" and s.symbol in classes)] if settled else facts


def _name_refused(f: FileDiff, before: bool, after: bool) -> None:
    """Log a side of ``f`` that was refused for its size or depth (a hostile or generated file), not merely
    invalid Python (which is common and says nothing): the operator sees which file gave no facts and why."""
    for side, text, failed in (("before", f.before, before), ("after", f.after, after)):
        if failed and text is not None:
            _, problem = safe_parse.parse(text)  # again, for the reason: only for a side that did not parse
            if problem and not problem.startswith("SyntaxError"):
                log.warning("%s (%s the change): skipped for code facts: %s", named(f.path), side, problem)


def _renamed_module(before: pyapi.Module, after: pyapi.Module, path: str, old_path: str) -> list[Change]:
    """A renamed file moves every top-level name it keeps to the new module."""
    old, new = module_name(old_path), module_name(path)
    if old == new:
        return []
    return [Change(kind="moved", symbol=d.name, path=path, line=d.line, before=old, after=new, public=d.public)
            for name, d in after.defs.items()
            if "." not in name and name in before.defs and d.public]


_TEST_DEF = re.compile(r"^([ \t]*)(?:async[ \t]+)?def[ \t]+(test\w*)[ \t]*\(|^([ \t]*)class[ \t]+(\w+)", re.MULTILINE)
_DECORATOR = re.compile(r"^[ \t]*@")


def test_names(text: str | None) -> dict[str, int]:
    """``test_x`` / ``TestY.test_z`` → line, read off the def and class lines (nested by indentation)."""
    return {name: line for name, (line, _) in _tests(text).items()}


def _tests(text: str | None) -> dict[str, tuple[int, tuple[str, ...]]]:
    """``test_x`` / ``TestY.test_z`` → (line, its text): the lines above the def that start with ``@`` and every
    line below it indented deeper (:func:`_normalised` says whether two texts differ as code)."""
    if not text:
        return {}
    found: dict[str, tuple[int, tuple[str, ...]]] = {}
    classes: list[tuple[int, str]] = []
    lines = text.splitlines()
    line, at = 1, 0
    for match in _TEST_DEF.finditer(text):
        line += text.count("\n", at, match.start())  # counted from the previous match: linear in the file
        at = match.start()
        indent = len((match[1] if match[2] else match[3]) or "")
        while classes and classes[-1][0] >= indent:
            classes.pop()
        if match[4]:
            classes.append((indent, match[4]))
            continue
        name = ".".join([*(c for _, c in classes), match[2]])
        if name not in found:
            found[name] = (line, _test_text(lines, line - 1, indent))
    return found


def _test_text(lines: list[str], at: int, indent: int) -> tuple[str, ...]:
    """The decorators and body of the test defined on ``lines[at]``, as written."""
    start = at
    while start > 0 and _DECORATOR.match(lines[start - 1]) \
            and len(lines[start - 1]) - len(lines[start - 1].lstrip()) == indent:
        start -= 1
    end = at + 1
    while end < len(lines):
        line = lines[end]
        stripped = line.lstrip()
        if stripped and not stripped.startswith(("#", ")")) and len(line) - len(stripped) <= indent:
            break
        end += 1
    return tuple(lines[start:end])


def _normalised(text: tuple[str, ...]) -> list[str]:
    """A test's lines as code: whitespace collapsed, comments and blank lines left out (a comment or a
    re-indent is no change)."""
    return [x for x in map(pyapi.code_line, text) if x]


def _test_facts(before: str | None, after: str | None, path: str, old_path: str) -> list[Change]:
    """Tests added, removed, and changed in place (their body or decorators: a skip, a new case)."""
    old, new = _tests(before), _tests(after)
    facts = [Change(kind="tests", symbol=n, path=path, line=line, after=n, detail="added", language="python")
             for n, (line, _) in new.items() if n not in old]
    facts += [Change(kind="tests", symbol=n, path=old_path, line=line, before=n, detail="removed", language="python")
              for n, (line, _) in old.items() if n not in new]
    facts += [Change(kind="tests", symbol=n, path=path, line=line, before=n, after=n, detail="changed",
                     language="python")
              for n, (line, body) in new.items()
              if n in old and old[n][1] != body and _normalised(old[n][1]) != _normalised(body)]
    return facts
