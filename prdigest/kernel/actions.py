"""Action required: what a reader must do because of a PR, one sentence per item, from its public facts.

A runtime or toolchain requirement moved (requirements, pyproject, setup.py, Dockerfiles, version files: one
sentence naming every upgrade with its version; the commit CI tests main against, or a commit pin moving to a later
commit of the upstream's main, is no release users install and asks nothing), a setting (environment variable,
argument, config field) removed, renamed or given a new default, a public name removed, renamed, moved or
re-signed. Internal facts ask nothing of a reader (prdigest/collect/facts/reach.py); items the editor cleared
(``nobreak``) are left out for as long as the upstream leaves that symbol as it was (:func:`action_key`).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from prdigest.kernel.factlines import code, unique
from prdigest.kernel.i18n import Section, messages
from prdigest.kernel.models import Change

#: Items one entry lists at most besides its upgrade sentence: a PR renaming forty names asks one thing of a
#: reader many times, and its facts list them all.
MAX_ITEMS = 3
#: A release's numbers, then a pre-release or post-release said after a hyphen (``9.1.0-beta.1``; an image tag's
#: ``-910b`` or ``-a3`` names hardware, not a stage, and is left out).
_VERSION = re.compile(r"(?:v?\d+(?:\.[0-9A-Za-z]+)+|v?\d+)(?:-(?:dev|alpha|beta|rc|pre|post)\.?\d*(?![\w]))?")
_FLOOR = re.compile(r"(===?|~=|>=|>)\s*(v?\d[\w.+-]*)")
_DOCKER_SUFFIX = re.compile(r"_(?:VERSION|TAG|VER|COMMIT)$", re.IGNORECASE)
#: A commit: seven to forty hex digits, but not a date-stamped build (``20260105``: seven or eight digits alone).
_SHA = re.compile(r"(?![0-9]{7,8}\Z)[0-9a-f]{7,40}")
#: The install options whose value is a package index (prdigest/collect/facts/indexes.py: the core's kernel
#: does not import the collectors, so the names are said again here).
INDEX_OPTIONS = frozenset({"--extra-index-url", "--index-url", "--find-links"})
#: Documentation pages (an install guide, a README): what they say is read, not installed from.
_DOCS = re.compile(r"\.(md|rst)$|(^|/)README[^/]*$", re.IGNORECASE)
#: A pin's ``detail`` when the file holding it is new in the PR (a Dockerfile for new hardware): a new way to
#: build, nothing that moved under anyone building main today, so it asks nothing.
NEW_FILE = "new file"
#: A ``dependency`` fact's ``detail`` for a system package an image now installs (prdigest/collect/facts/
#: syspackages.py; the kernel does not import the collectors, so the word is said again here).
SYSTEM = "system package"
#: A ``dependency`` fact's ``detail`` for a runtime requirement added that the repository never installed at a lower
#: version: ``pip install`` brings it with the package, so it asks nothing (prdigest/collect/facts/newreqs.py).
NEW_REQUIREMENT = "new requirement"
#: A ``dependency`` fact's ``detail`` for a setup line of the user docs replaced by another (``source …/set_env.sh`` →
#: ``export PATH=…``: prdigest/collect/facts/envsetup.py); its ``before`` and ``after`` are the two lines.
SETUP = "environment setup"
#: A ``dependency`` fact's ``detail`` for a vendor installer a page of the user docs runs whose version moved
#: (``Ascend-BiSheng-toolkit_…_20260105.run``: prdigest/collect/facts/installers.py): an upgrade like a pin.
INSTALLER = "installer"
#: A ``dependency`` fact's ``detail`` for a docs pin moved to the version the repository's images or requirements
#: already pinned before the PR (the page catching up: prdigest/collect/facts/installers.py): asked when that moved.
CAUGHT_UP = "pinned before"


def is_commit(version: str) -> bool:
    """Whether a pin's version is a commit (``35141a7eed``), not a release nor a date-stamped build."""
    return bool(_SHA.fullmatch(version))


def action_key(change: Change) -> str:
    """What a cleared item is remembered by: the symbol and what it became (a later change to it asks again)."""
    return f"{change.kind}:{change.symbol}:{change.after}"


def _words(language: str) -> Section:
    return messages(language, "action")


def version_of(spec: str) -> str:
    """The version a pin or tag asks for: ``==2.10.0.post4`` → ``2.10.0.post4``, ``>=2.6,<3`` → ``2.6``,
    ``9.1.0-910b-ubuntu22.04`` → ``9.1.0``, ``9.1.0-beta.1-310p`` → ``9.1.0-beta.1``; "" for a ceiling alone or no
    version."""
    spec = spec.split(";", 1)[0].strip()
    if _SHA.fullmatch(spec):
        return spec[:10]  # a commit pin: the commit is the version
    floor = _FLOOR.search(spec)
    if floor:
        return floor[2].rstrip(",")
    if spec[:1] in "<!" or not spec:
        return ""
    found = _VERSION.match(spec)
    return found[0] if found and any(ch.isdigit() for ch in found[0]) else ""


#: A pre-release or post-release tag after the release numbers (``3.2.0.dev20260105``, ``0.1.0rc9``, ``9.1.0-beta.1``,
#: ``2.10.0.post4``), and where it sorts against the release itself (0).
_STAGE = re.compile(r"[-._]?(dev|a|alpha|b|beta|c|rc|pre|preview|post)[-._]?(\d*)", re.IGNORECASE)
# A dev build numbered by its date: YYYYMMDD, then hours, minutes, seconds when present.
_DATE_STAMP = re.compile(r"(?:19|20)\d\d(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])(?:\d{2}){0,3}$")
_STAGES = {"dev": -4, "a": -3, "alpha": -3, "b": -2, "beta": -2, "c": -1, "rc": -1, "pre": -1, "preview": -1,
           "post": 1}


def release_key(version: str) -> tuple[tuple[int, ...], int, int]:
    """A version as it sorts: its release numbers (four, zero-padded), then its stage (a dev build, alpha, beta or
    release candidate before the release, a post-release after) and that stage's number."""
    found = re.match(r"v?(\d+(?:\.\d+)*)(.*)", version.strip(), re.IGNORECASE)
    if not found:
        return (), 0, 0
    numbers = tuple(int(x) for x in found[1].split(".")[:4])
    stage = _STAGE.match(found[2])
    return ((*numbers, *(0,) * (4 - len(numbers))), _STAGES[stage[1].lower()] if stage else 0,
            _stage_number(stage[2]) if stage and stage[2] else 0)


def _stage_number(digits: str) -> int:
    """A stage's number as it sorts: a build stamped with its date and hour (``dev2025110717``, 7 November 17:00)
    sorts by date against a date alone (``dev20251229``), not as the larger integer."""
    stamp = _DATE_STAMP.match(digits)
    return int(digits[:14].ljust(14, "0")) if stamp and len(digits) <= 14 else int(digits)


def _newer(new: str, old: str) -> bool:
    """Whether ``new`` is a later version than ``old`` (a commit is taken to move forward): a pin moving from a dev
    build or a release candidate to its release (``3.2.0.dev20260105`` → ``3.2.0``) is an upgrade."""
    if _SHA.fullmatch(new) or _SHA.fullmatch(old):
        return True
    return release_key(new) >= release_key(old)


def product(change: Change) -> str:
    """What a pin is of, as users name it: ``CANN_VERSION`` → ``CANN``, ``quay.io/ascend/cann`` → ``cann``."""
    last = change.symbol.rsplit("/", 1)[-1]
    return _DOCKER_SUFFIX.sub("", last) or last


def upgrades(changes: Sequence[Change]) -> list[tuple[str, str, bool | None]]:
    """(thing, version, newer) for each public runtime pin whose version moved (newer None: newly required)."""
    out: list[tuple[str, str, bool | None]] = []
    seen: set[tuple[str, str]] = set()
    installed = {c.symbol.lower() for c in changes if c.detail == INSTALLER}
    for c in changes:
        if c.kind != "dependency" or c.reach != "public" or not c.after \
                or c.detail in (NEW_FILE, SYSTEM, NEW_REQUIREMENT, SETUP, CAUGHT_UP):
            continue
        new, old = version_of(c.after), version_of(c.before) if c.before else ""
        if not new or (c.before and (not old or old == new)):
            continue  # a ceiling or a URL moved, or the same floor: nothing to install
        if old and _SHA.fullmatch(old) and _SHA.fullmatch(new):
            continue  # main tracking the upstream's main: the images build the new commit; no release to install
        key = (product(c).lower(), new)
        if key not in seen:
            seen.add(key)
            out.append((product(c), new, None if not old else _newer(new, old)))
    return [m for m in out if not (m[0].lower() in installed and _part_of(m, out))]


def _part_of(move: tuple[str, str, bool | None], moves: Sequence[tuple[str, str, bool | None]]) -> bool:
    """Whether an installer's move is a part of another thing moved to the same version (``Ascend-cann-toolkit``
    ``9.0.0`` beside the ``cann`` image's ``9.0.0``): one upgrade, said once by the shorter name (``torch-npu``
    beside ``torch`` is a package of its own: only installers are folded)."""
    words = set(re.split(r"[-_.+]+", move[0].lower()))
    return len(words) > 1 and any(other[1] == move[1] and other[0].lower() in words for other in moves
                                  if other[0].lower() != move[0].lower())


def dropped(changes: Sequence[Change]) -> list[tuple[str, str, str]]:
    """(thing, release, commit) for each public pin whose release a commit replaced (``VLLM_TAG=v0.18.0``
    removed, ``VLLM_COMMIT=35141a7…`` added): main no longer supports that release."""
    releases: dict[str, tuple[str, str]] = {}
    commits: dict[str, str] = {}
    for c in changes:
        if c.kind != "dependency" or c.reach != "public" or c.detail == "support dropped":  # gates: no pin
            continue
        old, new = version_of(c.before) if c.before else "", version_of(c.after) if c.after else ""
        if old and not _SHA.fullmatch(old) and (not new or _SHA.fullmatch(new)):
            releases.setdefault(product(c).lower(), (product(c), old))
        if new and _SHA.fullmatch(new):
            commits.setdefault(product(c).lower(), new)
    return [(name, old, commits[key]) for key, (name, old) in releases.items() if key in commits]


def actions(changes: Sequence[Change], language: str, cleared: Collection[str] = ()) -> list[str]:
    """The entry's ``action[]``: the sentences a reader must act on, in ``language`` (empty when nothing)."""
    w = _words(language)
    live = [c for c in changes if action_key(c) not in cleared]
    out: list[str] = []
    gone = dropped(live)
    replaced = {(name.lower(), commit) for name, _, commit in gone}
    moves = [m for m in upgrades(live) if (m[0].lower(), m[1]) not in replaced]
    # A new index asks readers to install from it when the PR moves a pin with it (where the new version comes
    # from); one a doc merely adds (a new install route, a mirror) is a fact, not something to do, and so is one a
    # doc's text changes: what users of main install from is in the Dockerfiles and requirement files.
    asked = [c for c in live if c.reach == "public" and c.detail != NEW_FILE and not (
        c.symbol in INDEX_OPTIONS and (not c.before or _DOCS.search(c.path)) and not moves)]
    # Beside the PR's upgrades, where they install from is part of that one thing to do: said in its sentence.
    via = unique([c for c in asked if moves and c.kind == "dependency" and c.symbol in INDEX_OPTIONS and c.after],
                 key=lambda c: (c.symbol, c.before, c.after))
    said_via = {(c.symbol, c.before, c.after) for c in via}
    asked = [c for c in asked if not (c.symbol in INDEX_OPTIONS and (c.symbol, c.before, c.after) in said_via)]
    if moves:
        out.append(_moves_sentence(moves, via, w))
    out += [w["dropped"].format(name=code(n), old=code(old), new=code(new)) for n, old, new in gone]
    out += _system(live, w)
    # A release whose gates went is said once: not again beside its pin dropped or the package's upgrade.
    said = {n.lower() for n, _, _ in gone} | {m[0].lower() for m in moves}
    asked = [c for c in asked if not (c.detail == "support dropped" and c.symbol.lower() in said)]
    # A setting removed where it is declared and no longer read elsewhere is one thing to do: stop setting it.
    removed = {(c.kind, c.symbol) for c in asked if c.kind in ("env", "argument", "config") and c.detail == "removed"}
    asked = [c for c in asked if not (c.detail == "no longer read" and (c.kind, c.symbol) in removed)]
    grouped = _unread(asked, w)
    each = [c for c in asked if not (grouped and c.kind == "env" and c.detail == "no longer read")]
    gone_settings = _removed(each, w)
    each = [c for c in each if not (c.detail == "removed" and any(c.kind == k for k, _ in gone_settings))]
    grouped += [sentence for _, sentence in gone_settings]
    # Names deprecated together (one release, one replacement: a switch and the sizes read under it) are one thing
    # to do, said once.
    together = _deprecated_together(each)
    each = [c for c in each if not (c.kind == "deprecated" and (c.after, c.detail) in together)]
    grouped += [_deprecated_sentence(names, version, instead, w) for (version, instead), names in together.items()]
    items = unique([*_required(asked, w), *_moved(asked, w), *grouped, *_migrating(asked, w),
                    *(s for s in (_item(c, w) for c in each) if s)],
                   key=lambda s: s)
    return out + items[:MAX_ITEMS]


def _moves_sentence(moves: Sequence[tuple[str, str, bool | None]], via: Sequence[Change], w: Section) -> str:
    """One sentence for all of a PR's upgrades, downgrades and new installs, with the index they come from: what
    to install before pulling main is one thing to do."""
    groups: list[tuple[str, str]] = []
    for verb, wanted in (("upgrade", True), ("downgrade", False), ("install", None)):
        items = [w["to" if wanted is not None else "at"].format(name=code(n), version=code(v))
                 for n, v, newer in moves if newer is wanted]
        if items:
            groups.append((verb, w["joiner"].join(items[:6])))
    where = "".join(w["via_changed" if c.before else "via_added"].format(
        option=code(c.symbol), old=code(c.before), new=code(c.after)) for c in via)
    if len(groups) == 1:
        return w[groups[0][0]].format(items=groups[0][1], via=where)
    parts = w["and"].join(w[f"part_{verb}"].format(items=items) for verb, items in groups)
    return w["moves"].format(parts=parts[:1].upper() + parts[1:], via=where)


def _system(live: Sequence[Change], w: Section) -> list[str]:
    """One sentence for the system packages the images users build from now install (clang for a compiler the
    kernels need): a reader installing outside the images adds them too."""
    names = unique([c.symbol for c in live if c.kind == "dependency" and c.detail == SYSTEM and c.reach == "public"],
                   key=lambda s: s)
    if not names:
        return []
    return [w["system_one" if len(names) == 1 else "system_many"].format(
        names=w["joiner"].join(code(n) for n in names[:6]))]


def _required(asked: Sequence[Change], w: Section) -> list[str]:
    """One sentence per check a PR added that stops the program unless environment variables are set (any one of
    those a check names will do), said with the setting that turns the check on when one does."""
    by_guard: dict[str, list[str]] = {}
    for c in asked:
        if c.kind == "env" and c.detail == "required" and c.symbol not in by_guard.setdefault(c.after, []):
            by_guard[c.after].append(c.symbol)
    return [w["required_when" if guard else "required"].format(
        noun=w["noun_env"], names=w["either"].join(code(n) for n in names), when=code(guard))
        for guard, names in by_guard.items()]


#: Settings a migration sentence names at most; the rest are counted (the PR's table lists them all).
MAX_MIGRATING = 3


def _deprecated_together(asked: Sequence[Change]) -> dict[tuple[str, str], list[str]]:
    """The names deprecated with one removal release and one replacement, by (release, replacement), where several."""
    by: dict[tuple[str, str], list[str]] = {}
    for c in asked:
        if c.kind == "deprecated" and c.after and c.symbol not in by.setdefault((c.after, c.detail), []):
            by[(c.after, c.detail)].append(c.symbol)
    return {key: names for key, names in by.items() if len(names) > 1}


def _deprecated_sentence(names: list[str], version: str, instead: str, w: Section) -> str:
    said = w["joiner"].join(code(n) for n in names[:MAX_MIGRATING])
    if len(names) > MAX_MIGRATING:
        said += w["migrate_more"].format(n=len(names) - MAX_MIGRATING)
    return w["deprecated_instead_many" if instead else "deprecated_many"].format(
        names=said, version=code(version), instead=code(instead))


def _migrating(asked: Sequence[Change], w: Section) -> list[str]:
    """One sentence for the settings a PR deprecates in favour of another with no removal release named yet (a
    warning naming old and new, a table of migrated settings in the docs: prdigest/collect/facts/migrations.py):
    move them before they are removed."""
    pairs = unique([(c.symbol, c.detail) for c in asked if c.kind == "deprecated" and c.detail and not c.after],
                   key=lambda p: p[0])
    if not pairs:
        return []
    said = w["joiner"].join(w["migrate_pair"].format(old=code(old), new=code(new))
                            for old, new in pairs[:MAX_MIGRATING])
    if len(pairs) > MAX_MIGRATING:
        said += w["migrate_more"].format(n=len(pairs) - MAX_MIGRATING)
    return [w["migrate_one" if len(pairs) == 1 else "migrate_many"].format(pairs=said)]


#: Keys a move sentence names at most; the rest are counted (its facts list them all).
MAX_MOVED = 8


def _moved(asked: Sequence[Change], w: Section) -> list[str]:
    """One sentence per nested config a PR moves config keys under (prdigest/collect/facts/configmoves.py), with the
    keys renamed on the way: moving the EPLB keys into ``eplb_config`` asks one thing, not seven removals."""
    by_owner: dict[str, list[tuple[str, str]]] = {}
    for c in asked:
        if c.kind == "config" and c.detail == "moved" and c.before and "." in c.after:
            owner, _, key = c.after.rpartition(".")
            if (c.before, key) not in by_owner.setdefault(owner, []):
                by_owner[owner].append((c.before, key))
    out = []
    for owner, keys in by_owner.items():
        names = w["joiner"].join(code(old) for old, _ in keys[:MAX_MOVED])
        if len(keys) > MAX_MOVED:
            names += w["migrate_more"].format(n=len(keys) - MAX_MOVED)
        # ``npugraph_ex_config.enable_static_kernel`` keeps its name in its new config: no rename
        renamed = [w["move_pair"].format(old=code(old), new=code(new)) for old, new in keys
                   if old.rsplit(".", 1)[-1] != new]
        renames = w["move_renames"].format(pairs=w["joiner"].join(renamed)) if renamed else ""
        out.append(w["move_keys_one" if len(keys) == 1 else "move_keys_many"].format(
            noun=w["noun_config" if len(keys) == 1 else "noun_configs"], names=names, owner=code(owner),
            renames=renames))
    return out


def _removed(asked: Sequence[Change], w: Section) -> list[tuple[str, str]]:
    """(kind, sentence) for each kind of setting a PR removes several of: dropping three prefetch variables asks
    one thing, not three items under the cap."""
    out: list[tuple[str, str]] = []
    for kind in ("env", "argument", "config"):
        names = unique([c.symbol for c in asked if c.kind == kind and c.detail == "removed"], key=lambda s: s)
        if len(names) >= 2:
            out.append((kind, w["remove_settings"].format(noun=w[f"noun_{kind}s"],
                                                          names=w["joiner"].join(code(n) for n in names))))
    return out


def _unread(asked: Sequence[Change], w: Section) -> list[str]:
    """One sentence for the environment variables a PR stops reading (envreads.py): a PR that moves the profiler
    off three variables asks one thing, not three."""
    names = unique([c.symbol for c in asked if c.kind == "env" and c.detail == "no longer read"], key=lambda s: s)
    if len(names) < 2:
        return []  # one variable: said by _item
    return [w["unread_settings"].format(names=w["joiner"].join(code(n) for n in names))]


def _item(c: Change, w: Section) -> str:
    """One fact's action, or "" when the fact asks nothing of a reader."""
    if c.kind == "dependency" and c.detail == "support dropped":  # its last version gate went (versiongates.py)
        return w["support_dropped"].format(name=code(c.symbol), old=code(c.before))
    if c.kind == "dependency" and c.detail == SETUP:  # a setup line the docs replaced (envsetup.py)
        return w["setup"].format(new=code(c.after), old=code(c.before))
    if c.kind == "dependency" and c.symbol in INDEX_OPTIONS:
        if not c.after:
            return ""  # an index dropped: installing keeps working without it
        return w["index_changed" if c.before else "index_added"].format(option=code(c.symbol), old=code(c.before),
                                                                         new=code(c.after))
    if c.kind in ("env", "argument", "config"):
        if c.detail == "required":
            return ""  # said once per check (_required)
        if c.detail == "moved":
            return ""  # said once per nested config (_moved)
        if c.detail == "rejected":  # a new check stops startup with the key set where it does not belong
            return w["rejected"].format(noun=w[f"noun_{c.kind}"], name=code(c.symbol), why=code(c.after))
        noun = w[f"noun_{c.kind}"]
        if c.detail.startswith("renamed") and c.before and c.after:
            return w["rename_setting"].format(noun=noun, old=code(c.before), new=code(c.after))
        if c.detail == "removed":
            return w["remove_setting"].format(noun=noun, name=code(c.symbol))
        if c.detail == "no longer rewritten" and c.before and c.after:  # prdigest/collect/facts/overrides.py
            return w["unrewritten"].format(noun=noun, name=code(c.symbol), old=code(c.before), new=code(c.after))
        if c.detail == "no longer read":  # prdigest/collect/facts/envreads.py; several: one sentence (_unread)
            return w["unread_setting"].format(noun=noun, name=code(c.symbol))
        if c.detail == "default" and c.before and c.after:
            was, now = switch(c.before), switch(c.after)
            if was is not None and now is not None and was != now:  # a switch turned on (or off) by itself
                return w["flip_on" if now else "flip_off"].format(noun=noun, name=code(c.symbol), old=code(c.before))
            return w["default"].format(noun=noun, name=code(c.symbol), old=code(c.before), new=code(c.after))
        return ""
    if c.kind == "deprecated":  # an action once the release that removes it is named
        if not c.after:
            return ""  # with its replacement: said once for all (_migrating)
        return w["deprecated_instead" if c.detail else "deprecated"].format(
            name=code(c.symbol), version=code(c.after), instead=code(c.detail))
    if c.kind == "file-deleted" and c.path.endswith((".sh", ".bash")):
        return w["remove_script"].format(path=code(c.path))  # public: the docs tell users to run it
    if not c.breaks:
        return ""
    name = code(c.symbol)
    if c.kind == "renamed":
        return w["rename_name"].format(old=code(c.before or c.symbol), new=code(c.after or c.symbol))
    if c.kind == "moved":
        return w["move_name"].format(name=name, old=code(c.before), new=code(c.after))
    if c.kind == "removed":
        return w["remove_name"].format(name=name)
    if c.kind == "signature":
        return w["signature"].format(name=name, detail=code(c.detail) if c.detail else "")
    if c.kind == "file-deleted":
        return w["remove_module"].format(path=code(c.path))
    if c.kind == "kernel":
        return w["kernel"].format(name=name)
    return ""


def switch(value: str) -> bool | None:
    """The on/off a default says (``True``, ``'1'``, ``"false"``), or None for any other value."""
    word = value.strip().strip("'\"").lower()
    return True if word in ("true", "1", "yes", "on") else False if word in ("false", "0", "no", "off") else None
