"""Facts from the REST patches, when no clone is configured or a merge commit is not in it: only what the
changed lines themselves show (a ``def``/``class`` line removed or added, a pin line, an env entry, a
``__global__`` line) and the files' own statuses. Partial by nature: the entry's coverage says ``patches``.
"""

from __future__ import annotations

import ast
import re

from prdigest.collect.facts import (
    deprecations,
    indexes,
    patchattrs,
    patchcalls,
    patchcontainers,
    patchexports,
    patchfields,
    patchhooks,
    patchmoves,
    patchnewfields,
    patchnewhooks,
    patchobligations,
    patchpassed,
    patchregistries,
    patchrehomed,
    patchsigs,
    patchunbound,
    pins,
    pyapi,
    pykernels,
    toolchain,
)
from prdigest.collect.facts.surface import Surface
from prdigest.kernel import safe_parse
from prdigest.kernel.models import Change, PullRequest

_DEF = re.compile(r"^(\s*)(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\((.*?)\)\s*(?:->[^:]*)?:\s*(?:#.*)?$")
_CLASS = re.compile(r"^(\s*)class\s+([A-Za-z_]\w*)\s*(?:\((.*?)\))?\s*:")
#: A ``def`` line whose parameters go on below it (vLLM's formatter writes one a line): the name is defined, its
#: parameters are not on this line.
_DEF_OPEN = re.compile(r"^(\s*)(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\((?!.*\)\s*(?:->[^:]*)?:\s*(?:#.*)?$)")
#: The parameters of a def :data:`_DEF_OPEN` matched: unknown from that line alone.
_OPEN = "\0open"
_ENV_ENTRY = re.compile(r"^\s*[\"']([A-Z][A-Z0-9_]{2,})[\"']\s*:")
_KERNEL = re.compile(r"__global__\s+(?:[\w:<>]+\s+)*?(?:__launch_bounds__\([^)]*\)\s+)?([A-Za-z_]\w*)\s*\(")


def _params(text: str) -> tuple[pyapi.Param, ...] | None:
    tree, _ = safe_parse.parse(f"def f({text}): pass")  # a hunk line: not Python is no fact, never an error
    if not isinstance(tree, ast.Module):
        return None
    node = tree.body[0]
    return pyapi._params(node.args) if isinstance(node, ast.FunctionDef) else None


def _sides(patch: str) -> tuple[list[str], list[str]]:
    removed, added = [], []
    for line in patch.splitlines():
        if line.startswith("-") and not line.startswith("---"):
            removed.append(line[1:])
        elif line.startswith("+") and not line.startswith("+++"):
            added.append(line[1:])
    return removed, added


def _defs(lines: list[str]) -> dict[str, tuple[str, str, int]]:
    """name → (kind, params text, indent) of the def/class lines among ``lines`` (top level and one in)."""
    found: dict[str, tuple[str, str, int]] = {}
    for line in lines:
        match = _DEF.match(line)
        if match:
            found.setdefault(match[2], ("def", match[3], len(match[1])))
            continue
        match = _DEF_OPEN.match(line)
        if match:
            found.setdefault(match[2], ("def", _OPEN, len(match[1])))
            continue
        match = _CLASS.match(line)
        if match:
            found.setdefault(match[2], ("class", match[3] or "", len(match[1])))
    return found


def patch_facts(pr: PullRequest, surface: Surface) -> list[Change]:
    """What the PR's patches show; the files' statuses for every file, patch or not."""
    facts: list[Change] = []
    for f in pr.files:
        if f.status == "removed":
            facts.append(Change(kind="file-deleted", symbol=f.path, path=f.path, before=f.path, language="text",
                                public=not surface.is_test(f.path)))
        elif f.status == "renamed" and f.previous_path:
            facts.append(Change(kind="file-renamed", symbol=f.path, path=f.path, before=f.previous_path,
                                after=f.path, language="text", public=not surface.is_test(f.path)))
        if not f.patch:
            continue
        removed, added = _sides(f.patch)
        if f.path.endswith(".py"):
            python = _python(f.path, f.patch, removed, added, surface)
            # Triton and Pallas kernels the changed lines show, said as kernels (pykernels.patch_facts)
            facts.extend(python if surface.is_test(f.path) else pykernels.patch_facts(f.path, f.patch, python))
            if not surface.is_test(f.path):  # the lines the patch adds: enough to see a deprecation announced
                facts.extend(deprecations.compare(f.path, "\n".join(removed), "\n".join(added)))
        elif f.path.endswith((".cu", ".cuh", ".cpp", ".h", ".hpp", ".cc")):
            old = {m[1] for line in removed for m in [_KERNEL.search(line)] if m}
            new = {m[1] for line in added for m in [_KERNEL.search(line)] if m}
            facts += [Change(kind="kernel", symbol=n, path=f.path, after=n, detail="added", language="cuda")
                      for n in sorted(new - old)]
            facts += [Change(kind="kernel", symbol=n, path=f.path, before=n, detail="removed", language="cuda")
                      for n in sorted(old - new)]
        if pins.is_pin_file(f.path) and not f.path.endswith((".toml", ".py")):
            facts.extend(pins.compare(f.path, "\n".join(removed), "\n".join(added)))
        if toolchain.is_toolchain_file(f.path):
            facts.extend(toolchain.compare(f.path, "\n".join(removed), "\n".join(added), changed_only=True))
        if indexes.is_index_file(f.path):  # the lines a patch holds: an index it replaces shows on both sides
            facts.extend(indexes.compare(f.path, "\n".join(removed), "\n".join(added)))
    # keywords the PR's added lines now pass to a constructor: across files (the call and the class are apart)
    facts += patchcalls.passes_facts([(f.path, f.patch) for f in pr.files if f.patch and f.path.endswith(".py")
                                      and surface.is_api(f.path)], facts)
    # keywords passed to a constructor through a name out of the patch's sight (the class, or a configured one)
    facts += patchunbound.unbound_passes([(f.path, f.patch) for f in pr.files if f.patch and f.path.endswith(".py")
                                          and surface.is_api(f.path)], facts)
    # data attributes removed from a class: across files (whether any added line of the PR still names one)
    seen = {(c.kind, c.symbol, c.path) for c in facts}
    facts += [c for c in patchattrs.removed_attribute_facts(
        [(f.path, f.patch) for f in pr.files if f.patch and f.path.endswith(".py") and surface.is_api(f.path)])
        if (c.kind, c.symbol, c.path) not in seen]
    # a hook the PR makes (a new method that only raises) and calls on an imported name in another hunk
    facts = patchhooks.hook_facts([(f.path, f.patch) for f in pr.files if f.patch and f.path.endswith(".py")
                                   and surface.is_api(f.path)], facts)
    # a new hook the PR calls, which sets what a method of another module stops setting (patchnewhooks.py)
    facts = patchnewhooks.new_hook_facts([(f.path, f.patch) for f in pr.files if f.patch and f.path.endswith(".py")
                                          and surface.is_api(f.path)], facts)
    # work the PR moves into a method from another module (an override that skips the base's no longer runs it):
    # the method's body fact, saying where the work came from
    moved = patchrehomed.rehomed_facts([(f.path, f.patch) for f in pr.files if f.patch and f.path.endswith(".py")
                                        and surface.is_api(f.path)])
    rehomed = {(c.symbol, c.path) for c in moved}
    facts = [c for c in facts if not (c.kind == "body" and (c.symbol, c.path) in rehomed)] + moved
    # the parameters a method's signature fact adds that the PR's added calls of it pass
    facts = patchpassed.with_passed([(f.path, f.patch) for f in pr.files if f.patch and f.path.endswith(".py")
                                     and surface.is_api(f.path)], facts)
    # a name one file removes and another adds moved (a re-export when the old file imports it back)
    return patchmoves.relocated(facts, [(f.path, f.patch) for f in pr.files])


def _read_back(path: str, patch: str) -> list[Change]:
    """What the hunks prove beyond single changed lines: signatures read whole or by their tail, the fields
    of classes whose constructor takes them, a package's re-exports removed, methods that now only raise
    ``NotImplementedError``, module-level containers of another kind, new registries beside another."""
    return (patchsigs.signature_facts(path, patch) + patchfields.field_facts(path, patch)
            + patchnewfields.unseen_field_facts(path, patch)
            + patchexports.reexport_facts(path, patch) + patchobligations.obligation_facts(path, patch)
            + patchcontainers.retyped_facts(path, patch) + patchregistries.registry_facts(path, patch))


def _python(path: str, patch: str, removed: list[str], added: list[str], surface: Surface) -> list[Change]:
    facts: list[Change] = []
    if surface.is_test(path):
        old = {n for n, (k, _, _) in _defs(removed).items() if k == "def" and n.startswith("test")}
        new = {n for n, (k, _, _) in _defs(added).items() if k == "def" and n.startswith("test")}
        facts += [Change(kind="tests", symbol=n, path=path, after=n, detail="added") for n in sorted(new - old)]
        facts += [Change(kind="tests", symbol=n, path=path, before=n, detail="removed") for n in sorted(old - new)]
        return facts
    if surface.is_env_file(path):
        old = {m[1] for line in removed for m in [_ENV_ENTRY.match(line)] if m}
        new = {m[1] for line in added for m in [_ENV_ENTRY.match(line)] if m}
        facts += [Change(kind="env", symbol=n, path=path, detail="added", language="config") for n in sorted(new - old)]
        facts += [Change(kind="env", symbol=n, path=path, before=n, detail="removed", language="config")
                  for n in sorted(old - new)]
    if not surface.is_api(path):
        return facts
    facts += _read_back(path, patch)
    old_defs, new_defs = _defs(removed), _defs(added)
    read = {c.symbol.rpartition(".")[2] for c in facts if c.kind == "signature"}
    for name in sorted(old_defs.keys() | new_defs.keys()):
        public = not name.startswith("_") or (name.startswith("__") and name.endswith("__"))
        b, a = old_defs.get(name), new_defs.get(name)
        if b and a:
            if b[1] == a[1] or _OPEN in (b[1], a[1]):  # an open side: the signature is read whole elsewhere
                continue
            if b[0] == "def" and a[0] == "def":
                if name in read:  # the signature read whole, with its class, says it
                    continue
                ob, oa = _params(b[1]), _params(a[1])
                detail = pyapi.signature_detail(ob, oa) if ob is not None and oa is not None else ""
                if ob is not None and oa is not None and not detail:
                    continue
                facts.append(Change(kind="signature", symbol=name, path=path, before=f"({b[1]})", after=f"({a[1]})",
                                    detail=detail, public=public))
            elif b[0] == "class" and a[0] == "class":
                facts.append(Change(kind="bases", symbol=name, path=path, before=b[1], after=a[1], public=public))
        elif b and not name.startswith("__") and not b[2] and b[1] != _OPEN:
            # an indented ``def`` is a method: named here without its class it would read as a module's
            # function (``inputs`` → ``vllm.inputs``); the hunks' reader names it with its class
            facts.append(Change(kind="removed", symbol=name, path=path, before="(…)" if b[1] == _OPEN else f"({b[1]})",
                                public=public))
        elif a and public and not name.startswith("__"):
            facts.append(Change(kind="added", symbol=name, path=path, after="(…)" if a[1] == _OPEN else f"({a[1]})",
                                public=public))
    return facts
