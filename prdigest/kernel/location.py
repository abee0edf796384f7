"""Where the state store lives (``--state`` / ``DIGEST_STATE``): a SQLite file or a PostgreSQL URL.

The URL carries a password, so this type never shows it: ``str``, ``repr``, error messages and the JSON
form are redacted; only :attr:`StateLocation.dsn` (handed to the driver) holds the real value.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote

from pydantic import GetCoreSchemaHandler
from pydantic_core import core_schema

from prdigest.kernel.text import SECRET_PARAM, redact_url

DEFAULT_STATE = Path(".digest/state.sqlite")
SETTING = "--state / $DIGEST_STATE"


def state_help(kept: str = "", default: str = "") -> str:
    """The help of every command's ``--state`` option: ``kept`` says in parentheses what the command keeps or
    reads there, ``default`` where it looks without one (``State database (index caches); or $DIGEST_STATE.``)."""
    what = f" ({kept})" if kept else ""
    fallback = f" (default: {default})" if default else ""
    return f"State database{what}; or $DIGEST_STATE{fallback}."
POSTGRES_SCHEMES = ("postgresql", "postgres")

Dialect = Literal["sqlite", "postgresql"]

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
# "postgresql:/user:pw@host/db": a URL that went through pathlib.Path, which collapses "//".
_COLLAPSED_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]{2,}:/(?!/)")
# libpq's "key=value" form: not supported (and as a path it would create a file named after the password).
_KEYWORD_DSN = re.compile(r"(?:^|\s)(?:host|hostaddr|dbname|user|password|port)\s*=", re.IGNORECASE)
_MASK = "***"


class StateLocation:
    """A parsed ``--state`` value: ``dialect`` is ``sqlite`` (``path``) or ``postgresql`` (``dsn``)."""

    __slots__ = ("dialect", "path", "_dsn")

    def __init__(self, dialect: Dialect, *, path: Path | None = None, dsn: str | None = None) -> None:
        self.dialect: Dialect = dialect
        self.path: Path | None = path
        self._dsn = dsn

    @classmethod
    def parse(cls, value: "StateLocation | str | os.PathLike[str]") -> "StateLocation":
        """Parse a setting value; raises ``ValueError`` (with the value redacted) for anything unsupported."""
        if isinstance(value, StateLocation):
            return value
        if isinstance(value, os.PathLike):
            return cls("sqlite", path=Path(value))
        if not isinstance(value, str):
            raise ValueError(f"expected a SQLite file path or a postgresql:// URL, got {type(value).__name__}")
        text = value.strip()
        if not text:
            raise ValueError(f"it is empty: give a SQLite file path (default {DEFAULT_STATE}) "
                             "or postgresql://user:password@host:port/database")
        if _URL.match(text):
            scheme = text.split("://", 1)[0].lower()
            if scheme not in POSTGRES_SCHEMES:
                raise ValueError(f"'{redact_url(text)}': '{scheme}://' is not supported; use a SQLite "
                                 "file path or postgresql://user:password@host:port/database")
            _userinfo, hosts, query = _libpq_parts(text)
            if not hosts and "host=" not in query:
                raise ValueError(f"'{redact_url(text)}': the URL names no host; use "
                                 "postgresql://user:password@host:port/database")
            for host in hosts.split(","):
                port = host.rpartition("]")[2] if host.startswith("[") else host
                if ":" in port and not port.rpartition(":")[2].isdigit():
                    raise ValueError(f"'{redact_url(text)}': the port is not a number (a password with '/' must "
                                     "be written %2F in the URL)")
            return cls("postgresql", dsn=text)
        if _COLLAPSED_URL.match(text):
            scheme = text.split(":", 1)[0]
            raise ValueError(f"'{scheme}:/…' looks like a URL that lost a '/' (was it read as a file path?); "
                             "use a SQLite file path or postgresql://user:password@host:port/database")
        if _KEYWORD_DSN.search(text):
            raise ValueError("libpq 'key=value' strings are not supported; use "
                             "postgresql://user:password@host:port/database")
        return cls("sqlite", path=Path(text).expanduser())

    @property
    def dsn(self) -> str:
        """The PostgreSQL URL with its password, for the driver only: never log or print it."""
        if self._dsn is None:
            raise ValueError(f"{self}: not a PostgreSQL location")
        return self._dsn

    @property
    def is_postgres(self) -> bool:
        return self.dialect == "postgresql"

    @property
    def has_password(self) -> bool:
        """Whether the URL carries a password (user info, ``password=`` or ``sslpassword=``): it must not
        become a Prefect parameter, which Prefect stores in its database and shows in the UI."""
        return bool(self._dsn and _passwords(self._dsn))

    def exists(self) -> bool:
        """Whether a SQLite file is there; a PostgreSQL server is assumed to exist (connecting tells)."""
        return self.path.exists() if self.path is not None else True

    def redact(self, text: str) -> str:
        """``text`` with this location's passwords (if any) masked, for error messages from the driver."""
        for secret in sorted(_passwords(self._dsn) if self._dsn else [], key=len, reverse=True):
            text = text.replace(secret, _MASK)
        return text

    def __str__(self) -> str:
        return str(self.path) if self.path is not None else redact_url(self.dsn)

    def __repr__(self) -> str:
        return f"StateLocation({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, StateLocation):
            return NotImplemented
        return (self.dialect, self.path, self._dsn) == (other.dialect, other.path, other._dsn)

    def __hash__(self) -> int:
        return hash((self.dialect, self.path, self._dsn))

    def __reduce__(self) -> tuple[Any, ...]:  # pickles (Prefect, subprocesses) keep the real value
        return (_rebuild, (self.dialect, self.path, self._dsn))

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        # JSON output is redacted like SecretStr's: settings dumped to a log or an artifact never leak it.
        return core_schema.no_info_plain_validator_function(
            cls.parse, json_schema_input_schema=core_schema.str_schema(),
            serialization=core_schema.plain_serializer_function_ser_schema(str, when_used="json-unless-none"))


def _rebuild(dialect: Dialect, path: Path | None, dsn: str | None) -> StateLocation:
    return StateLocation(dialect, path=path, dsn=dsn)


def _libpq_parts(url: str) -> tuple[str | None, str, str]:
    """(user info, hosts, query) of a ``postgresql://`` URL split as libpq splits it: the user info runs to
    the first '@' met before any '/' (so '#' and '?' may be in a password, which urlsplit would cut at); the
    hosts run to the next '/' or '?'."""
    rest = url.split("://", 1)[1] if "://" in url else url
    end = next((i for i, c in enumerate(rest) if c in "@/"), len(rest))
    userinfo = None
    if end < len(rest) and rest[end] == "@":
        userinfo, rest = rest[:end], rest[end + 1:]
    cut = next((i for i, c in enumerate(rest) if c in "/?"), len(rest))
    hosts, tail = rest[:cut], rest[cut:]
    return userinfo, hosts, tail.partition("?")[2]


def _passwords(url: str) -> list[str]:
    """Every secret in ``url``, as written and percent-decoded: the user info's password (libpq's split,
    and also everything up to the last '@', in case a '/' in the password defeats libpq's split) and the
    ``password=`` and ``sslpassword=`` parameters."""
    found: set[str] = set()
    userinfo, _, _ = _libpq_parts(url)
    rest = url.split("://", 1)[1] if "://" in url else url
    for info in (userinfo, rest.rpartition("@")[0] if "@" in rest else None):
        if info and ":" in info:
            found.add(info.partition(":")[2])
    found.update(m.group(1) for m in SECRET_PARAM.finditer(url))
    found |= {unquote(v) for v in found}
    return [v for v in found if v]


def url_has_password(text: str) -> bool:
    """Whether a ``--state`` value written as a URL carries a password, even one libpq cannot parse."""
    return "://" in text and bool(_passwords(text))
