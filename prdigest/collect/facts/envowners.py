"""Whose environment variable it is: a variable shipped code stops reading asks something of a reader only when
the repository owns it.

A plugin reads variables of the libraries it drives (vllm-ascend reading HCCL's ``HCCL_INTRA_PCIE_ENABLE`` to
pick a communication path): when it stops reading one (what the variable chose is now its default), the library
still reads it, so setting it still does what it did there; it is a fact, not something to move off. The
repository owns a variable that its env modules name (:meth:`Surface.is_env_file`, ``envs.py``: the registry its
docs' list of variables is built from), that a page of its user docs about environment variables names, or that
carries its prefix (the first word most of its env modules' declared names share: ``VLLM_`` for
``vllm_ascend/envs.py``). One it does not own is another program's when its first word is a namespace the user
docs set for that program: several variables of that prefix the docs name and no shipped module reads (``HCCL_IF_IP``,
``HCCL_SOCKET_IFNAME``, ``HCCL_BUFFSIZE`` exported in the tutorials); a variable of the repository's own that nothing
lists (``CPU_BINDING_NUM``, read by one module) keeps its action. The trees are read only when such a fact is
there; without an env module nothing tells, and the facts stand.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from prdigest.collect.facts.envreads import UNREAD
from prdigest.collect.facts.reach import user_doc
from prdigest.collect.facts.surface import Surface
from prdigest.collect.git import GitUnavailable, UpstreamClone
from prdigest.collect.git.texts import tree_texts
from prdigest.kernel.models import Change

#: A declared variable in an env module: a dict key ``"NAME":`` (vLLM's ``environment_variables``).
_DECLARED = re.compile(r"""^[ \t]*["']([A-Z][A-Z0-9_]{2,})["'][ \t]*:""", re.MULTILINE)
#: A page of the user docs about environment variables (``user_guide/configuration/env_vars.md``).
_ENV_PAGE = re.compile(r"^docs?/(?!.*(developer|contribut|design))[^.]*env[^/]*\.(md|rst)$", re.IGNORECASE)
#: A prefix is the repository's when at least this many of its declared names share it.
MIN_PREFIXED = 3


def prefix(declared: Sequence[str]) -> str:
    """The first word most declared names share (``VLLM_``), or "" when no word is shared by enough of them."""
    words = Counter(name.split("_", 1)[0] + "_" for name in declared if "_" in name)
    if not words:
        return ""
    word, count = words.most_common(1)[0]
    return word if count >= MIN_PREFIXED else ""


def owned(facts: Sequence[Change], shas: Sequence[str], clone: UpstreamClone, surface: Surface) -> list[Change]:
    """``facts`` (with their reach) where each variable no longer read that the repository does not own, by the
    trees at ``shas`` (before and after the commit), is internal, saying why."""
    unread = {c.symbol for c in facts if c.kind == "env" and c.detail == UNREAD and c.reach == "public"}
    if not unread:
        return list(facts)
    env_files: set[str] = set()
    pages: set[str] = set()

    def wanted(path: str) -> bool:
        if surface.is_test(path):
            return False
        if path.endswith(".py") and surface.is_env_file(path):
            env_files.add(path)
            return True
        if _ENV_PAGE.match(path):
            pages.add(path)
            return True
        return False

    texts: list[str] = []
    try:
        for sha in shas:
            texts += [text for text, _ in tree_texts(clone, sha, wanted).values() if text]
    except GitUnavailable:
        return list(facts)
    if not env_files:
        return list(facts)  # no registry of its own variables: nothing tells whose a variable is
    declared = sorted({name for text in texts for name in _DECLARED.findall(text)})
    word = prefix(declared)
    named = {n for n in unread if any(re.search(rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])", t)
                                      for t in texts)}
    unowned = {n for n in unread - named if not (word and n.startswith(word))}
    spaces = _namespaces(unowned, shas[-1], clone, surface)
    foreign = {n for n in unowned if n.split("_", 1)[0] + "_" in spaces}
    where = ", ".join(f"`{p}`" for p in sorted(env_files)[:2])
    under = f", nor under its prefix `{word}`" if word else ""
    return [c.model_copy(update={"reach": "internal", "reach_how": (
        f"a variable of another program's `{c.symbol.split('_', 1)[0]}_` namespace, whose variables its docs set "
        f"and its code does not read ({spaces[c.symbol.split('_', 1)[0] + '_']}); the repository does not own it "
        f"(not declared in {where}{under}): whatever else reads `{c.symbol}` still does")})
        if c.kind == "env" and c.detail == UNREAD and c.symbol in foreign else c for c in facts]


def _namespaces(names: set[str], sha: str, clone: UpstreamClone, surface: Surface) -> dict[str, str]:
    """Each prefix of ``names`` that names another program's variables (→ a few of them, as code): at least
    :data:`MIN_PREFIXED` other variables the user docs of the tree at ``sha`` set or name that no shipped module reads
    (``HCCL_IF_IP``, ``HCCL_SOCKET_IFNAME``, ``HCCL_BUFFSIZE``: the collective library's, exported in the
    tutorials); a variable of the repository's own that its docs never list (``CPU_BINDING_NUM``) has none."""
    words = {n.split("_", 1)[0] + "_" for n in names if "_" in n}
    if not words:
        return {}
    pattern = re.compile(r"(?<![A-Za-z0-9_])((?:" + "|".join(map(re.escape, sorted(words))) + r")[A-Z0-9_]{2,})")
    try:
        docs = tree_texts(clone, sha, user_doc)
        code = tree_texts(clone, sha, lambda path: path.endswith(".py") and not surface.is_test(path)
                          and not user_doc(path))
    except GitUnavailable:
        return {}
    set_there = {m for text, _ in docs.values() if text for m in pattern.findall(text)}
    read = {m for text, _ in code.values() if text for m in pattern.findall(text)}
    found: dict[str, str] = {}
    for word in sorted(words):
        others = sorted(n for n in set_there - read - names if n.startswith(word))
        if len(others) >= MIN_PREFIXED:
            found[word] = ", ".join(f"`{n}`" for n in others[:3])
    return found
