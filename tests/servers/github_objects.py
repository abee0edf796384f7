"""The local GitHub server's answer to GraphQL ``object`` queries: a repository's ``object(oid: $v)`` commits
and ``object(expression: $v)`` blobs (``<sha>:<path>``) by alias, from the served git repository, with GitHub's
shapes: ``null`` for a path the commit lacks (no error), ``{}`` for another type than the fragment's, a
variable used but not declared refused, a refused heavy query (``data`` null) and a failed object (``null`` and an
error naming its alias) on demand (:class:`~tests.servers.github_data.GitHubState`)."""

from __future__ import annotations

import re
from typing import Any

from tests.servers.github_data import GitHubState

_SELECTION = re.compile(r"(\w+): object\((?:expression|oid): \$(\w+)\)")
_DECLARED = re.compile(r"\$(\w+): (?:String|GitObjectID)!")
_LITERAL = re.compile(r"object\((?:expression|oid): \"")
_PARENTS = re.compile(r"parents\(first: (\d+)\)")
_WENT_WRONG = ("Something went wrong while executing your query. This may be the result of a timeout, or it "
               "could be a GitHub bug.")


def objects_answer(st: GitHubState, query: str, variables: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The answer's JSON body (HTTP 200) and the kind the server counts it as."""
    selections = _SELECTION.findall(query)
    declared = set(_DECLARED.findall(query))
    undeclared = [var for _, var in selections if var not in declared or var not in variables]
    if undeclared:
        return {"errors": [{"message": f"Variable ${undeclared[0]} is used by anonymous query but not declared",
                            "extensions": {"code": "variableNotDefined"}}]}, "graphql"
    if _LITERAL.search(query) or not selections:
        # Read only from variables, as the collector must send them (a path is data); a literal would need a
        # real GraphQL parser to read safely.
        return {"errors": [{"message": "this stand-in reads object(expression:) and object(oid:) only from "
                                       "variables"}]}, "graphql"
    if st.graphql_max_objects is not None and len(selections) > st.graphql_max_objects:
        return {"data": None, "errors": [{"message": _WENT_WRONG}]}, "graphql_refused"
    parents = _PARENTS.search(query)
    first = int(parents.group(1)) if parents else 1
    data: dict[str, Any] = {}
    errors: list[dict[str, Any]] = []
    for alias, var in selections:
        value = variables.get(var)
        if value in st.failing_objects:
            data[alias] = None
            errors.append({"path": ["repository", alias], "message": _WENT_WRONG})
            continue
        data[alias] = git_object(st, value, first) if isinstance(value, str) else None
    return {"data": {"repository": data}, **({"errors": errors} if errors else {})}, "graphql_objects"


def git_object(st: GitHubState, expression: str, first: int) -> dict[str, Any] | None:
    """One ``object`` of the served repository: ``sha`` (a commit, with its first ``first`` parents) or
    ``sha:path`` (a blob's ``byteSize isBinary isTruncated text``; ``text`` null when binary, cut at
    ``blob_text_limit``)."""
    git = st.git
    if git is None:
        return None
    rev, colon, path = expression.partition(":")  # git's rule for a sha: the first colon ends the revision
    if not colon:
        found = git.commit(rev) if len(rev) == 40 else None
        if found is None:
            return None
        return {"oid": found[0], "parents": {"nodes": [{"oid": p} for p in found[1][:first]]}}
    entry = git.entry(rev, path)
    if entry is None:
        return None
    if entry.kind != "blob":
        return {}  # a folder: nothing of the Blob fragment
    content = git.blob(entry.oid)
    binary = b"\0" in content[:8000]
    limit = st.blob_text_limit
    return {"byteSize": len(content), "isBinary": binary, "isTruncated": not binary and len(content) > limit,
            "text": None if binary else utf8(content[:limit])}


def utf8(data: bytes) -> str:
    """Blob bytes as GraphQL's ``text``: UTF-8; an encoded lone surrogate (ED A0 80) passes through as one, as a
    server that does not check sends it (JSON carries it as ``\\ud800``); other bad bytes become U+FFFD."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        try:
            return data.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            return data.decode("utf-8", "replace")
