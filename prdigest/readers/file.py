"""Readers and editors: who receives the digest, and what each one follows (readers.yaml)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Self

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from prdigest.kernel.errors import ConfigError
from prdigest.kernel.gitvalues import checked
from prdigest.kernel.models import Verdict
from prdigest.kernel.text import clean
from prdigest.kernel.vocabulary import NAME_PATTERN, name_problem
from prdigest.kernel.yamlfile import FAST_LOADER, load_yaml_model
from prdigest.readers.addresses import ADDRESSES, EMAIL, FEISHU, SLACK
from prdigest.readers.stream import Shared, stream_model
from prdigest.state.compact import compact

#: Read-first entries per reader unless the readers file says otherwise, and the most it may say.
DEFAULT_BUDGET = 5
MAX_BUDGET = 20
#: The shipped media's address keys, kept as the readers file's own fields (``reader.email``); every other
#: medium's address is in ``addresses`` (a plugin's, declared in the ``pr_digest.addresses`` group).
SHIPPED_FIELDS = ("email", "slack", "feishu")
_SHIPPED = {f.name: f for f in (EMAIL, SLACK, FEISHU)}


def _check_address(name: str, value: str | None) -> str | None:
    if value is not None and (problem := _SHIPPED[name].problem(value)):
        raise ValueError(problem)
    return value


def _check_subsystem(value: str) -> str:
    # Every repo's names have this form, folder names too; a name like "../x" never reaches a file name.
    if name_problem(value):
        # repr: a name with a line break in it is shown as "\n", so the message stays one line.
        raise ValueError(f"{value!r} is not a subsystem name: use lower-case letters, digits and '-' "
                         f"({NAME_PATTERN})")
    return value


def _one_line(value: str) -> str:
    # A name goes into the To: header and the status table: no line break or control character.
    if value != clean(value) or any(c in value for c in "\r\n\u2028\u2029"):
        raise ValueError(f"{value!r} must be a single line without control characters")
    return value


SubsystemName = Annotated[str, AfterValidator(_check_subsystem)]
#: A downstream's name in the readers file: also part of a variant's key and of a file name.
DOWNSTREAM_NAME = r"^[a-z0-9][a-z0-9-]{0,39}$"
_PACKAGE = r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$"
PackageName = Annotated[str, Field(pattern=_PACKAGE)]


class Downstream(BaseModel):
    """A team's own repository built on the upstream (a plugin, a fork): where it is and what to read of it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: A checkout, read as it is (its HEAD named when it is a git repository) ...
    path: str | None = Field(default=None, min_length=1)
    #: ... or a repository URL, kept as a clone in the state folder and fetched once per run.
    git: str | None = Field(default=None, min_length=1)
    ref: str = Field(default="main", pattern=r"^[A-Za-z0-9][A-Za-z0-9._/-]*$")
    #: The downstream's own import packages: what is indexed (default: its top-level packages).
    packages: tuple[PackageName, ...] = ()
    #: The upstream's import packages (default: from the upstream repository's name).
    upstream: tuple[PackageName, ...] = ()

    # Both reach git's argv: a value git would read as an option (``--upload-pack=CMD``) or a transport that
    # runs a command (``ext::``) stops the run here, before anything is fetched.
    _git = field_validator("git")(classmethod(lambda cls, v: v if v is None else checked("location", v)))
    _ref = field_validator("ref")(classmethod(lambda cls, v: checked("ref", v)))

    @model_validator(mode="after")
    def _one_place(self) -> "Downstream":
        if (self.path is None) == (self.git is None):
            raise ValueError("give exactly one of 'path' (a checkout) or 'git' (a repository URL)")
        return self


class Addressed(BaseModel):
    """Someone's addresses: the shipped media's as fields, any other medium's in ``addresses``.

    The readers file writes a plugin medium's address as a key of its own (``toy: room-1``, the key its
    ``pr_digest.addresses`` entry point declares) or under ``addresses:``; each is checked by its medium's
    :class:`~prdigest.readers.addresses.AddressField`. A key no medium declares stays an unknown field.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    email: str | None = None
    slack: str | None = None
    feishu: str | None = None
    #: (medium, address) pairs for media beyond the shipped ones, sorted by medium (a tuple: the model is frozen).
    addresses: tuple[tuple[str, str], ...] = ()

    _email = field_validator("email")(classmethod(lambda cls, v: _check_address("email", v)))
    _slack = field_validator("slack")(classmethod(lambda cls, v: _check_address("slack", v)))
    _feishu = field_validator("feishu")(classmethod(lambda cls, v: _check_address("feishu", v)))

    @model_validator(mode="before")
    @classmethod
    def _plugin_addresses(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        given = data.pop("addresses", None) or {}
        if isinstance(given, (list, tuple)) and all(isinstance(p, (list, tuple)) and len(p) == 2 for p in given):
            given = dict(given)
        if not isinstance(given, dict):
            raise ValueError("addresses: write a mapping of medium to address (e.g. 'toy: room-1')")
        given = {**given, **{k: data.pop(k) for k in list(data)
                             if isinstance(k, str) and k not in cls.model_fields and k in ADDRESSES}}
        pairs: list[tuple[str, str]] = []
        for name, value in given.items():
            if name in SHIPPED_FIELDS:
                data[name] = value
                continue
            if name not in ADDRESSES:
                raise ValueError(f"addresses: unknown medium '{name}'; known: {', '.join(ADDRESSES.names())}")
            if not isinstance(value, str):
                raise ValueError(f"{name}: {value!r} is not an address: write it as text on the key's line")
            if problem := ADDRESSES[name].problem(value):
                raise ValueError(f"{name}: {problem}")
            pairs.append((name, value))
        data["addresses"] = tuple(sorted(pairs))
        return data

    def address(self, medium: str) -> str | None:
        """The address on ``medium``, or None."""
        if medium in SHIPPED_FIELDS:
            return getattr(self, medium)
        return dict(self.addresses).get(medium)

    def all_addresses(self) -> dict[str, str]:
        """Every address by medium: the shipped media's in their order, then the others by name."""
        found = {name: getattr(self, name) for name in SHIPPED_FIELDS if getattr(self, name)}
        return {**found, **dict(self.addresses)}

    def without(self, media: set[str]) -> Self:
        """A copy without the addresses on ``media``."""
        update: dict[str, object] = {name: None for name in SHIPPED_FIELDS if name in media}
        update["addresses"] = tuple(p for p in self.addresses if p[0] not in media)
        return self.model_copy(update=update)


class Reader(Addressed):
    """Someone (or a Slack channel, or a Feishu/Lark group) who receives the digest, with the filter that
    picks their entries."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$", max_length=64)
    name: str = Field(min_length=1, max_length=120)
    subsystems: tuple[SubsystemName, ...] = ()
    exclude: tuple[SubsystemName, ...] = ()
    min_verdict: Verdict = Verdict.SKIP
    #: At most this many entries in the reader's "read first" (fewer when fewer deserve it).
    budget: int = Field(default=DEFAULT_BUDGET, ge=1, le=MAX_BUDGET, strict=True)
    #: The team's own repository (a name under ``downstreams``): what affects it comes first.
    downstream: str | None = Field(default=None, pattern=DOWNSTREAM_NAME)

    _name = field_validator("name")(classmethod(lambda cls, v: _one_line(v)))

    @model_validator(mode="after")
    def _reachable(self) -> "Reader":
        if not self.all_addresses():
            raise ValueError(f"reader '{self.id}' has none of email, slack or feishu (nor another medium's "
                             "address): nothing could be delivered")
        return self


class Editor(Addressed):
    """Someone told when a review is waiting."""

    name: str = Field(min_length=1, max_length=120)

    _name = field_validator("name")(classmethod(lambda cls, v: _one_line(v)))


class ReadersFile(BaseModel):
    """The whole readers.yaml."""

    model_config = ConfigDict(extra="forbid")

    readers: list[Reader] = Field(min_length=1)
    editors: list[Editor] = Field(default_factory=list)
    downstreams: dict[Annotated[str, Field(pattern=DOWNSTREAM_NAME)], Downstream] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _unique_ids(self) -> "ReadersFile":
        seen: set[str] = set()
        for reader in self.readers:
            if reader.id in seen:
                raise ValueError(f"reader id '{reader.id}' appears twice")
            seen.add(reader.id)
        return self


def _line(path: Path, index: int, field: str, name: str) -> int | None:
    """The 1-based line of ``name`` in ``readers[index].field`` (the file already parsed once)."""
    root = yaml.compose(path.read_text(encoding="utf-8"), Loader=FAST_LOADER)
    if root is None:  # emptied since it was parsed: no line to point at
        return None
    node = next((v for k, v in root.value if k.value == "readers"), None)
    reader = node.value[index] if isinstance(node, yaml.SequenceNode) else None
    names = next((v for k, v in reader.value if k.value == field), None) if isinstance(
        reader, yaml.MappingNode) else None
    if isinstance(names, yaml.SequenceNode):
        return next((n.start_mark.line + 1 for n in names.value if getattr(n, "value", None) == name),
                    names.start_mark.line + 1)
    return reader.start_mark.line + 1 if reader is not None else None


def _key_line(path: Path, index: int, field: str) -> int | None:
    """The 1-based line of the key ``field`` of ``readers[index]``."""
    root = yaml.compose(path.read_text(encoding="utf-8"), Loader=FAST_LOADER)
    if root is None:  # emptied since it was parsed: no line to point at
        return None
    node = next((v for k, v in root.value if k.value == "readers"), None)
    reader = node.value[index] if isinstance(node, yaml.SequenceNode) else None
    if not isinstance(reader, yaml.MappingNode):
        return None
    return next((k.start_mark.line + 1 for k, _ in reader.value if k.value == field), reader.start_mark.line + 1)


def _read(path: Path) -> ReadersFile:
    """The readers file validated, its readers one at a time (:mod:`prdigest.readers.stream`: never the whole
    file's YAML nodes at once); anything the reader-by-reader read does not decide is read whole, as before."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        text = None  # the whole-file read names the file and why
    # equal filters kept once (a reader's subsystems, exclusions, verdict): memory flat in readers, a plan's
    # filters read from the same tuples
    shared = Shared(("subsystems", "exclude", "min_verdict", "downstream"))
    found = stream_model(path, text, Reader, "readers", what="readers", shared=shared) if text is not None else None
    if found is not None:
        try:
            # the readers are models already (validated once, not again); the rest of the file is small
            return ReadersFile.model_validate(found)
        except ValidationError:
            pass  # named with its line by the whole-file read
    whole = load_yaml_model(path, ReadersFile, what="readers")
    for reader in whole.readers:  # as the reader-by-reader read keeps them (held to the run's end)
        compact(reader)
    return whole


def load_readers(path: Path, known_subsystems: set[str] | None = None) -> ReadersFile:
    """Read and validate a readers file against the repo's subsystems.

    Every subsystem name must have the form of one (``^[a-z0-9][a-z0-9-]*$``); with ``known_subsystems``
    (the classifier's, from the repo's rules) a name the repo never assigns is an error too. An empty set
    means the names cannot be known in advance (a repo without rules: folder names).
    """
    readers = _read(path)
    for i, reader in enumerate(readers.readers):
        if reader.downstream is not None and reader.downstream not in readers.downstreams:
            line = _key_line(path, i, "downstream")
            known = ", ".join(sorted(readers.downstreams)) or "none: add a 'downstreams:' section"
            raise ConfigError(f"{path}{f':{line}' if line else ''}: readers[{i}] ('{reader.id}') downstream: "
                              f"unknown downstream '{reader.downstream}'; known: {known}")
    if known_subsystems:
        for i, reader in enumerate(readers.readers):
            for field in ("subsystems", "exclude"):
                unknown = sorted(set(getattr(reader, field)) - known_subsystems)
                if unknown:
                    line = _line(path, i, field, unknown[0])
                    raise ConfigError(
                        f"{path}{f':{line}' if line else ''}: readers[{i}] ('{reader.id}') {field}: unknown "
                        f"subsystem(s) {', '.join(unknown)}; known: {', '.join(sorted(known_subsystems))}"
                    )
    return readers


def example_readers_path() -> Path:
    """The readers file shipped with pr-digest (used by the demo)."""
    return Path(__file__).parent / "examples" / "readers.yaml"
