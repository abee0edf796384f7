"""The exceptions pr-digest raises on purpose.

Every subclass of :class:`DigestError` is *shown to users*: the CLI prints its message as one line and
exits non-zero, the flow logs it and fails the run. Messages name the file, line, PR, reader or setting
concerned and say what to do. Anything else that escapes is a bug and crashes loudly with a traceback.
"""

from __future__ import annotations


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
