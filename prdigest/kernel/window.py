"""The edition's time window: ``[since, until)`` in UTC."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone

from prdigest.kernel.errors import ConfigError
from prdigest.kernel.models import utc


def parse_instant(text: str, *, flag: str) -> datetime:
    """A date (00:00 UTC that day) or an ISO time (naive = UTC); ``flag`` names the option in errors."""
    value = text.strip()
    try:
        if len(value) == 10:
            return datetime.combine(date.fromisoformat(value), time(0), tzinfo=timezone.utc)
        return utc(datetime.fromisoformat(value.replace("Z", "+00:00")))
    except ValueError:
        raise ConfigError(f"{flag} '{text}': expected a date (2026-11-16) or an ISO time "
                          "(2026-11-16T08:00:00Z)") from None


@dataclass(frozen=True)
class Window:
    """A half-open interval of merge times: a PR merged exactly at ``since`` is in, at ``until`` out."""

    since: datetime
    until: datetime

    def __post_init__(self) -> None:
        if self.since >= self.until:
            raise ConfigError(f"--since {self.since.isoformat()} must be before --until {self.until.isoformat()}")

    def __contains__(self, instant: datetime) -> bool:
        return self.since <= utc(instant) < self.until

    @classmethod
    def last_full_week(cls, now: datetime | None = None) -> "Window":
        """Monday 00:00 UTC to Monday 00:00 UTC of the last week that has ended."""
        now = utc(now or datetime.now(timezone.utc))
        this_monday = datetime.combine(now.date() - timedelta(days=now.weekday()), time(0), tzinfo=timezone.utc)
        return cls(this_monday - timedelta(days=7), this_monday)

    @classmethod
    def from_flags(cls, since: str | None, until: str | None, *, now: datetime | None = None) -> "Window | None":
        """The window the flags ask for; ``None`` when neither is given (the source picks its default)."""
        if since is None and until is None:
            return None
        start = parse_instant(since, flag="--since") if since else None
        end = parse_instant(until, flag="--until") if until else None
        if start is None:
            assert end is not None  # one of the two flags was given
            start = end - timedelta(days=7)
        if end is None:
            end = start + timedelta(days=7)
        return cls(start, end)
