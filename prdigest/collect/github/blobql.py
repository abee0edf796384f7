"""Merge commits' parents and many files' text per GraphQL query, instead of a REST request per commit and per
side of each file.

Each query asks a repository for up to :data:`OBJECTS_PER_QUERY` objects under aliases:
``object(oid: $c0) { ... on Commit { oid parents(first: 1) { nodes { oid } } } }`` for a commit and
``object(expression: $b0) { ... on Blob { byteSize isBinary isTruncated text } }`` for ``<sha>:<path>``. Every
argument is a GraphQL variable, so a path with quotes, backslashes or newlines is data and never query text.
GitHub answers ``null`` for a path the commit does not have; an object an error names (``null`` too) is
:data:`LEFT_OUT`, never taken for absent. A GitHub without GraphQL (404, 410), or without a token for it (401),
raises :class:`NoGraphQL`; a query it rejects (errors and no data) answers None, and the caller asks REST for
those.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any

from github import GithubException

from prdigest.collect.github.client import Clients

log = logging.getLogger(__name__)

#: Objects per query. GitHub's GraphQL limits count connections (500,000 nodes) and time (10 s a query); a blob
#: is no connection, so the bound is the answer's size: 50 source files of ~20 KB are ~1 MB of JSON, and
#: GitHub cuts a large blob's text (``isTruncated``) rather than send it whole.
OBJECTS_PER_QUERY = 50
#: Commits per query (each answer is two shas).
COMMITS_PER_QUERY = 100

_COMMIT = "... on Commit { oid parents(first: 1) { nodes { oid } } }"
_BLOB = "... on Blob { byteSize isBinary isTruncated text }"
#: Halves of a UTF-16 pair left alone: JSON can carry them (``\ud800``), UTF-8 (SQLite, hashing, ast) cannot.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


#: In :func:`objects`' answer: an alias the answer left out (asked again through REST).
LEFT_OUT = "left out"
#: :func:`blob_text`'s reason for a file GraphQL did not give whole: its REST contents are asked for.
ASK_REST = "ask REST"


class NoGraphQL(Exception):
    """The GitHub answered 404 or 410 to ``POST /graphql`` (an Enterprise server without it), or 401 (no token)."""


def objects(clients: Clients, repo: str, kind: str, args: Sequence[str]) -> list[Any] | None:
    """The ``kind`` (``oid`` or ``expression``) objects named by ``args``, in order: each the GraphQL node (a
    dict; ``{}`` when it is another type), ``None`` where GitHub found nothing, or :data:`LEFT_OUT` where the
    answer left it out; None when the query was rejected. Raises :class:`NoGraphQL` on 404/410."""
    owner, name = repo.split("/", 1)
    var_type, fragment = ("GitObjectID!", _COMMIT) if kind == "oid" else ("String!", _BLOB)
    prefix = "c" if kind == "oid" else "b"
    # Only our own aliases and variable names are written into the query; every path and sha is a variable.
    decls = " ".join(f"${prefix}{i}: {var_type}" for i in range(len(args)))
    fields = " ".join(f"{prefix}{i}: object({kind}: ${prefix}{i}) {{ {fragment} }}" for i in range(len(args)))
    query = (f"query($owner: String!, $name: String!, {decls}) {{ repository(owner: $owner, name: $name) "
             f"{{ {fields} }} }}")
    variables: dict[str, str] = {"owner": owner, "name": name}
    variables.update({f"{prefix}{i}": arg for i, arg in enumerate(args)})
    gh = clients.get()
    try:
        _, answer = gh.requester.requestJsonAndCheck("POST", gh.requester.graphql_url,
                                                     input={"query": query, "variables": variables})
    except GithubException as exc:
        # 401: GitHub's GraphQL needs a token where REST does not (a run without GITHUB_TOKEN); a bad token
        # is then refused by the REST requests, with their message.
        if exc.status in (401, 404, 410):
            raise NoGraphQL(clients.base_url) from None
        raise
    data = ((answer or {}).get("data") or {}).get("repository")
    if not isinstance(data, dict):
        errors = (answer or {}).get("errors") or [{}]
        log.warning("GitHub GraphQL rejected a query of %d objects of %s (%s); those are asked through REST",
                    len(args), repo, str(errors[0].get("message") or "no message")[:200])
        return None
    # An alias an error names (a timeout, "something went wrong") is null in the data but not known absent.
    failed = {str(e["path"][1]) for e in (answer or {}).get("errors") or []
              if isinstance(e, dict) and isinstance(e.get("path"), list) and len(e["path"]) > 1}
    return [LEFT_OUT if f"{prefix}{i}" in failed else data.get(f"{prefix}{i}", LEFT_OUT) for i in range(len(args))]


def parent_of(node: Any) -> tuple[bool, str | None]:
    """``(found, first parent sha)`` of a commit node (a root commit has no parent)."""
    if not isinstance(node, dict) or not node.get("oid"):
        return False, None
    parents = (node.get("parents") or {}).get("nodes") or []
    first = parents[0].get("oid") if parents and isinstance(parents[0], dict) else None
    return True, str(first) if first else None


def blob_text(node: Any, max_bytes: int) -> tuple[str | None, str]:
    """A blob node's text and why there is none: ``not found``, ``binary``, ``too large``, or :data:`ASK_REST`
    (GitHub cut the text of a file within ``max_bytes``, or left the alias out)."""
    if node == LEFT_OUT:
        return None, ASK_REST
    if not isinstance(node, dict) or not node:
        return None, "not found"  # nothing at that path, or a folder / submodule there
    size = node.get("byteSize")
    if node.get("isBinary"):
        return None, "binary"
    if isinstance(size, int) and size > max_bytes:
        return None, "too large"
    text = node.get("text")
    if node.get("isTruncated") or not isinstance(text, str) or not isinstance(size, int):
        return None, ASK_REST  # an answer that is not what GitHub sends: REST says what the file is
    if len(text) > max_bytes:  # a byteSize saying less than the text holds: the text's own size counts
        return None, "too large"
    if "\0" in text[:8000]:  # as the REST path and git decide
        return None, "binary"
    return _LONE_SURROGATE.sub("\ufffd", text), ""
