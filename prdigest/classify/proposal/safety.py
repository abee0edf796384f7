"""Whether a regular expression written in a repository's config (mergify's ``files~=``) can go into a
rules file: it must pass the rules files' own guard (:func:`prdigest.kernel.patterns.check`: it runs on RE2 in
linear time, or on Python's engine without nested quantifiers and without a repeated part that can match
the same text in two ways) and stay short."""

from __future__ import annotations

from prdigest.kernel.patterns import PatternError, check

MAX_REGEX = 300


def regex_problem(pattern: str) -> str | None:
    """Why ``pattern`` should not be run on untrusted paths and titles, or None when it is fine."""
    if len(pattern) > MAX_REGEX:
        return f"longer than {MAX_REGEX} characters"
    try:
        check(pattern)
    except PatternError as exc:
        return str(exc).split(":", 1)[0] if "invalid" in str(exc) else exc.reason
    return None
