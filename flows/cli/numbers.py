"""PR-number options that take several values: ``--reject 1 2 3``, ``--reject 1,2,3`` and ``--reject 1 --reject 2``.

Click options take one value each; :class:`NumbersCommand` rewrites ``--reject 1 2 3`` into the repeated
form before Click parses it, so every spelling reaches the command as a list of strings, and
:func:`pr_numbers` turns that list into PR numbers (commas and ``#`` accepted).
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from typer.core import TyperCommand

from prdigest.kernel.errors import ReviewError


def spread(args: list[str], options: tuple[str, ...]) -> list[str]:
    """``args`` with each further value after one of ``options`` given as that option repeated.

    A further value is a token without ``-`` (a flow run id has dashes, a flag starts with one)."""
    out: list[str] = []
    current: str | None = None  # the number option whose values are being read
    expecting = False  # the next token is the option's own value, whatever it looks like
    for i, arg in enumerate(args):
        if arg == "--":  # everything after it is positional
            return out + args[i:]
        if arg in options:
            current, expecting = arg, True
        elif arg.split("=", 1)[0] in options:  # --reject=1,2
            current, expecting = arg.split("=", 1)[0], False
        elif expecting:
            expecting = False
        elif current and not arg.startswith("-") and "-" not in arg:
            out.append(current)  # a further value (a run id has dashes; pr_numbers names a bad value)
        else:
            current = None
        out.append(arg)
    return out


class NumbersCommand(TyperCommand):
    """A command whose :attr:`number_options` accept several values after one flag."""

    number_options: ClassVar[tuple[str, ...]] = ("--reject", "--approve")

    def parse_args(self, ctx: Any, args: list[str]) -> list[Any]:
        # typer vendors its own click types; the context is whichever click the command runs under
        return super().parse_args(ctx, spread(list(args), self.number_options))


def pr_numbers(values: list[str], flag: str) -> list[int]:
    """PR numbers from an option's values (``['1,2', '#3']`` → ``[1, 2, 3]``); ReviewError names a bad one."""
    numbers: list[int] = []
    for value in values:
        for token in re.split(r"[\s,]+", value.strip()):
            if not token:
                continue
            if not re.fullmatch(r"#?\d{1,9}", token):
                raise ReviewError(f"{flag} {token[:40]!r} is not a PR number (give numbers: {flag} 41873 41902, "
                                  f"or {flag} 41873,41902)")
            numbers.append(int(token.lstrip("#")))
    return numbers


def verdict_changes(values: list[str], flag: str = "--set") -> list[tuple[int, str]]:
    """Verdict changes from an option's values (``['41873=skim', '41902=deep-read,7=skip']``), checked as the review
    form checks them; ReviewError names a bad one and says how to write it."""
    changes: list[tuple[int, str]] = []
    for value in values:
        for token in re.split(r"[\s,]+", value.strip()):
            if not token:
                continue
            match = re.fullmatch(r"#?(\d{1,9})=(deep-read|skim|skip)", token)
            if match is None:
                raise ReviewError(f"{flag} {token[:40]!r} is not a verdict change (write {flag} 41873=skim: a PR "
                                  "number, '=', then deep-read, skim or skip)")
            changes.append((int(match.group(1)), match.group(2)))
    numbers = [n for n, _ in changes]
    if twice := sorted({n for n in numbers if numbers.count(n) > 1}):
        raise ReviewError(f"{flag}: PR {', '.join(f'#{n}' for n in twice)} is given more than one verdict")
    return changes
