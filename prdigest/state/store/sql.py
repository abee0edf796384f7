"""SQL text shared by both dialects: ``?`` placeholders for psycopg, migration scripts split into statements."""

from __future__ import annotations

import re
from functools import lru_cache

from prdigest.kernel.location import Dialect
from prdigest.kernel.storage import Migration

# String literals, quoted identifiers and comments are copied (only '%' doubled); '?' outside them is a
# placeholder. psycopg parses '%' everywhere in a query that has parameters, even inside literals.
_TOKEN = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|/\*.*?\*/|\?|%", re.DOTALL)


@lru_cache(maxsize=512)
def to_pyformat(sql: str) -> str:
    """``sql`` with ``?`` placeholders as psycopg's ``%s`` and literal ``%`` escaped as ``%%``."""
    def swap(match: re.Match[str]) -> str:
        token = match.group()
        if token == "?":
            return "%s"
        return token.replace("%", "%%")
    return _TOKEN.sub(swap, sql)


def _is_code(chunk: str) -> bool:
    return bool(re.sub(r"--[^\n]*|/\*.*?\*/", "", chunk, flags=re.DOTALL).strip())


def statements(migration: Migration, dialect: Dialect, *, component: str = "?") -> list[str]:
    """The statements of one migration step for ``dialect`` (scripts are split on ``;``: keep ``;`` out of
    literals and comments)."""
    if isinstance(migration, str):
        script = migration
    else:
        if dialect not in migration:
            raise KeyError(f"migration of '{component}' has no script for {dialect} (has {sorted(migration)})")
        script = migration[dialect]
    return [chunk.strip() for chunk in script.split(";") if _is_code(chunk)]
