"""Message catalogs: every word pr-digest shows a person, one YAML file per language.

A language is a catalog ``<language>.yaml``: the ones shipped in ``prdigest/kernel/catalogs/``, those of
a package that declares a ``pr_digest.catalogs`` entry point (its value names a module; the ``*.yaml`` files
beside it are catalogs), and those in the folders ``DIGEST_CATALOGS`` names (separated like ``PATH``),
later ones winning key by key: a team adds a language, or words one message its own way, with a file.

A catalog is nested mappings of messages (``view: {subject: "…"}`` is the key ``view.subject``) and a
``meta`` mapping: ``name`` (the language in its own words) and ``plural`` (a rule of
:data:`prdigest.kernel.text.PLURAL_RULES`, for the ``{n|form|forms}`` parts of its messages); English's
``also_given`` lists fields the code gives an area that no English message there uses.
English is the reference and the fallback:

- a message a language lacks is the English one, whole (fallback per message, never per word);
- a sentence put together from several messages (a subject built from counts and verdict labels, the
  offline drafter's rationale) asks :meth:`Catalog.whole` for the catalog that has all of them: the
  language's own, or else English for every piece, so that no sentence mixes two languages.

A message may use only the fields the English messages of its area use (``{repo}``, ``{n}``), checked when
loaded, so that a translation does not fail while rendering.
"""

from __future__ import annotations

import os
import re
import string
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

import yaml

from prdigest.kernel.errors import ConfigError
from prdigest.kernel.text import PLURAL_RULES, counted, plural_free
from prdigest.kernel.yamlfile import FAST_LOADER

#: The shipped catalogs.
CATALOG_DIR = Path(__file__).parent / "catalogs"
#: The reference language: every key exists in it, and every other language falls back to it.
FALLBACK = "en"
#: The language of a run that names none (DIGEST_LANGUAGE unset) and of a page that knows no better.
DEFAULT = "zh-CN"
#: Folders of a team's own catalogs, separated like PATH.
ENV = "DIGEST_CATALOGS"
#: The entry-point group of packages that ship catalogs (the value names a module beside its *.yaml files).
ENTRY_POINTS = "pr_digest.catalogs"
#: A catalog's file name: a language tag (zh-CN, en, fr, pt-BR, ja).
_TAG = re.compile(r"^[a-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$")


def _flatten(tree: Mapping[str, Any], prefix: str, out: dict[str, Any], where: Path) -> None:
    for key, value in tree.items():
        if not isinstance(key, str) or not key or "." in key:
            raise ConfigError(f"{where}: key {key!r} under '{prefix or '(top)'}' must be a word without dots")
        name = f"{prefix}.{key}" if prefix else key
        if isinstance(value, Mapping):
            _flatten(value, name, out, where)
        elif isinstance(value, (str, list)):
            out[name] = value
        else:
            raise ConfigError(f"{where}: {name}: a message is text (or a list of texts), not {value!r}")


def _fields(text: str) -> set[str]:
    names = set()
    for _, field, _, _ in string.Formatter().parse(plural_free(text)):
        if field is not None:
            names.add(re.split(r"[.\[!:]", field, maxsplit=1)[0])
    return names


def _read(path: Path) -> dict[str, Any]:
    try:
        tree = yaml.load(path.read_text(encoding="utf-8"), Loader=FAST_LOADER) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: cannot read this catalog: {exc}") from exc
    if not isinstance(tree, Mapping):
        raise ConfigError(f"{path}: a catalog is a mapping of areas to messages")
    flat: dict[str, Any] = {}
    _flatten(tree, "", flat, path)
    for name, value in flat.items():
        for text in value if isinstance(value, list) else [value]:
            if not isinstance(text, (str, list)):
                raise ConfigError(f"{path}: {name}: a list holds texts, not {text!r}")
            if isinstance(text, str):
                try:
                    _fields(text)
                except ValueError as exc:
                    raise ConfigError(f"{path}: {name}: {exc} (write a literal brace as {{{{ or }}}})") from exc
    return flat


def _plugin_folders() -> tuple[Path, ...]:
    folders = []
    for entry in metadata.entry_points(group=ENTRY_POINTS):
        module = entry.load()
        folders.append(Path(module.__file__).parent)
    return tuple(folders)


def folders() -> tuple[Path, ...]:
    """Where catalogs are read from, in order (later folders win): shipped, plugins, ``DIGEST_CATALOGS``."""
    extra = tuple(Path(p) for p in os.environ.get(ENV, "").split(os.pathsep) if p.strip())
    return (CATALOG_DIR, *_cached_plugin_folders(), *extra)


@lru_cache(maxsize=1)
def _cached_plugin_folders() -> tuple[Path, ...]:
    return _plugin_folders()


@dataclass(frozen=True)
class _Loaded:
    """Every language's own messages (flat keys), after checking them against English."""

    own: Mapping[str, Mapping[str, Any]]
    names: Mapping[str, str]


@lru_cache(maxsize=8)
def _load(where: tuple[Path, ...]) -> _Loaded:
    raw: dict[str, dict[str, Any]] = {}
    origin: dict[tuple[str, str], Path] = {}
    for folder in where:
        if folder != CATALOG_DIR and not folder.is_dir():
            raise ConfigError(f"{ENV}: {folder} is not a folder of catalogs (<language>.yaml files)")
        for path in sorted(folder.glob("*.yaml")):
            if not _TAG.match(path.stem):
                raise ConfigError(f"{path}: a catalog is named after its language tag (fr.yaml, pt-BR.yaml)")
            messages = _read(path)
            raw.setdefault(path.stem, {}).update(messages)
            origin.update({(path.stem, k): path for k in messages})
    if FALLBACK not in raw:
        raise ConfigError(f"{CATALOG_DIR / (FALLBACK + '.yaml')}: the English catalog is missing")
    reference = raw[FALLBACK]
    # The fields a message may use: those the English messages of its area use (what the code gives there).
    given: dict[str, set[str]] = {}
    for key, value in reference.items():
        if isinstance(value, str):
            given.setdefault(key.rpartition(".")[0], set()).update(_fields(value))
    # Fields the code gives an area that no English message there needs ("area: field, field").
    for line in reference.get("meta.also_given", []):
        area, _, listed = str(line).partition(":")
        given.setdefault(area.strip(), set()).update(n.strip() for n in listed.split(",") if n.strip())
    own: dict[str, dict[str, Any]] = {}
    names: dict[str, str] = {}
    for language, messages in raw.items():
        meta = {k[5:]: v for k, v in messages.items() if k.startswith("meta.")}
        rule = meta.get("plural", "one")
        if rule not in PLURAL_RULES:
            raise ConfigError(f"{origin[(language, 'meta.plural')]}: meta.plural '{rule}' is not one of "
                              f"{', '.join(PLURAL_RULES)}")
        names[language] = str(meta.get("name", language))
        built: dict[str, Any] = {}
        for key, value in messages.items():
            allowed = given.get(key.rpartition(".")[0], set())
            if isinstance(value, str) and language != FALLBACK and (extra := _fields(value) - allowed):
                raise ConfigError(f"{origin[(language, key)]}: {key}: uses {{{'}, {'.join(sorted(extra))}}}, which "
                                  f"no English message of '{key.rpartition('.')[0]}' gives")
            built[key] = counted(value, rule) if isinstance(value, str) else value
        own[language] = built
    return _Loaded(own, names)


def _loaded() -> _Loaded:
    return _load_for(os.environ.get(ENV, ""))


@lru_cache(maxsize=8)
def _load_for(setting: str) -> _Loaded:
    # Keyed by the setting's text: a lookup (several per line of every message) costs a dictionary hit.
    # Installed packages are read once per process (_cached_plugin_folders).
    return _load(folders())


@lru_cache(maxsize=64)
def _catalog(language: str, setting: str) -> "Catalog":
    loaded = _load_for(setting)
    reference = loaded.own[FALLBACK]
    return Catalog(language if language in loaded.own else FALLBACK, loaded.own.get(language, reference), reference)


def reload() -> None:
    """Read every catalog again on next use (installed packages included): after a package was installed."""
    for cached in (_cached_plugin_folders, _load, _load_for, _catalog):
        cached.cache_clear()


def languages() -> tuple[str, ...]:
    """Every language a catalog is found for, sorted (English among them)."""
    return tuple(sorted(_loaded().own))


def language_name(language: str) -> str:
    """The language in its own words (its catalog's ``meta.name``), e.g. 中文, English, Français."""
    return _loaded().names.get(language, language)


def plural_rule(language: str) -> str:
    """How ``language`` picks a count's form (its catalog's ``meta.plural``; English's without a catalog)."""
    return str(catalog(language).get("meta.plural", "one"))


def known_language(value: str) -> str:
    """``value`` when a catalog exists for it; a validator for settings and options."""
    found = languages()
    if value not in found:
        raise ValueError(f"no catalog for language '{value}' (found: {', '.join(found)}); add {value}.yaml to "
                         f"a folder named in {ENV}")
    return value


class Section(Mapping[str, Any]):
    """The messages under one area of a catalog (``catalog(lang).section("view")["subject"]``)."""

    def __init__(self, catalog: "Catalog", prefix: str) -> None:
        self._catalog, self._prefix = catalog, prefix + "."
        self.language = catalog.language

    def __getitem__(self, key: str) -> Any:
        name = self._prefix + key
        if name not in self._catalog and any(k.startswith(name + ".") for k in self._catalog):
            return Section(self._catalog, name)  # a nested area: ``impact.how`` → its verbs by key
        return self._catalog[name]

    def __iter__(self) -> Iterator[str]:
        n = len(self._prefix)
        return (k[n:] for k in self._catalog if k.startswith(self._prefix))

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def has(self, key: str) -> bool:
        """Whether the language's own catalog has ``key`` (not English standing in for it)."""
        return self._catalog.has(self._prefix + key)


class Catalog(Mapping[str, Any]):
    """One language's messages by dotted key, each falling back to English on its own."""

    def __init__(self, language: str, own: Mapping[str, Any], reference: Mapping[str, Any]) -> None:
        self.language, self._own, self._reference = language, own, reference
        self._complete: dict[str, bool] = {}  # per prefix: asked for every line a variant renders

    def __getitem__(self, key: str) -> Any:
        if key in self._own:
            return self._own[key]
        return self._reference[key]

    def __contains__(self, key: object) -> bool:
        return key in self._own or key in self._reference

    def __iter__(self) -> Iterator[str]:
        yield from self._reference
        yield from (k for k in self._own if k not in self._reference)

    def __len__(self) -> int:
        return len(set(self._reference) | set(self._own))

    def has(self, key: str) -> bool:
        """Whether the language's own catalog has ``key`` (not English standing in for it)."""
        return key in self._own

    def section(self, prefix: str) -> Section:
        """The messages under ``prefix`` by their short keys."""
        return Section(self, prefix)

    def complete(self, *prefixes: str) -> bool:
        """Whether this language has every message English has under each of ``prefixes`` (a key or an area)."""
        for prefix in prefixes:
            done = self._complete.get(prefix)
            if done is None:
                keys = [k for k in self._reference if k == prefix or k.startswith(prefix + ".")]
                done = self._complete[prefix] = bool(keys) and all(k in self._own for k in keys)
            if not done:
                return False
        return True

    def whole(self, *prefixes: str) -> "Catalog":
        """This catalog when it has every message under ``prefixes``, else English: the language a sentence
        made of those messages is written in, so that it never mixes two."""
        return self if self.language == FALLBACK or self.complete(*prefixes) else catalog(FALLBACK)


def catalog(language: str) -> Catalog:
    """The catalog of ``language``; English's for a language without one."""
    return _catalog(language, os.environ.get(ENV, ""))


def messages(language: str, area: str) -> Section:
    """The messages of one ``area`` (``view``, ``site``, ``web``…) in ``language``, per message English."""
    return catalog(language).section(area)
