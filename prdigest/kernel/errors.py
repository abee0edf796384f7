"""The exceptions pr-digest raises on purpose.

Every subclass of :class:`DigestError` is *shown to users*: the CLI prints its message as one line and
exits non-zero, the flow logs it and fails the run. Messages name the file, line, PR, reader or setting
concerned and say what to do. Anything else that escapes is a bug and crashes loudly with a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import ValidationError


class DigestError(Exception):
    """Base class of errors whose message is shown to a person as is."""


class ConfigError(DigestError):
    """A settings value, readers file or rules file is missing or invalid."""


class SourceError(DigestError):
    """The PR source (a JSONL file, GitHub) cannot be read or holds a malformed record."""


class RulesError(ConfigError):
    """A subsystem rules file is invalid (bad regex, unknown key, duplicate subsystem)."""


class RenderError(DigestError):
    """An entry or a whole variant could not be rendered for one medium."""

    def __init__(self, message: str, *, number: int | None = None) -> None:
        super().__init__(message)
        self.number = number


class DownstreamError(DigestError):
    """A downstream repository (the readers file's ``downstreams``) could not be read: a missing folder, a
    clone that failed. One line naming the downstream; the run goes on without its impact."""


class DeliveryError(DigestError):
    """A message could not be handed to its channel (SMTP, Slack, the outbox)."""


class ReviewError(DigestError):
    """The editor's review input is invalid or the review expired."""


@dataclass(frozen=True)
class Problem:
    """The first problem of a pydantic ``ValidationError``, for the one line a bad value is told in: ``field``
    is its location dotted (``gold.verdict``; the caller's ``empty`` when it has none), ``top`` the top-level
    field alone (a flag's name), ``more`` how many problems follow it."""

    field: str
    top: str
    message: str
    loc: tuple[str | int, ...]
    more: int

    def and_more(self, noun: str = "") -> str:
        """`` (and 2 more)`` (``noun`` after the count: `` (and 2 more problem(s))``), '' when it is the only one."""
        return f" (and {self.more} more{' ' + noun if noun else ''})" if self.more else ""


def first_problem(exc: ValidationError, *, under: tuple[str, ...] = (), empty: str = "") -> Problem:
    """The first of ``exc``'s problems, its location below ``under`` (the part of a larger record validated)."""
    err = exc.errors()[0]
    loc = tuple(err["loc"])
    path = (*under, *loc)
    return Problem(field=".".join(str(p) for p in path) or empty, top=str(loc[0]) if loc else empty,
                   message=str(err["msg"]), loc=loc, more=exc.error_count() - 1)


def problems(exc: ValidationError, *, empty: str = "") -> list[tuple[str, str]]:
    """Every problem of ``exc`` as (its location dotted, or ``empty``; its message), in pydantic's order."""
    return [(".".join(str(p) for p in err["loc"]) or empty, str(err["msg"])) for err in exc.errors()]
