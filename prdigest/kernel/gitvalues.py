"""What may reach git's command line: repository locations, commit ids and ref names.

Every such value comes from a file or a remote someone else writes (the readers file, ``--git``, GitHub's
``merge_commit_sha``): a value starting with ``-`` would be read by git as an option (``--upload-pack=CMD``
runs CMD), and an ``ext::`` URL runs a command by design. Values are checked when the configuration is read,
and again where git is run (``prdigest.collect.git.argv``).
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

#: The transports a repository location may use: https and ssh for remotes, file for local clones (git's
#: "file" protocol also governs plain local paths, which a checkout given as a folder needs). Never ``ext``
#: (runs a command), ``git`` (unauthenticated), ``http`` (cleartext credentials) or a remote helper.
ALLOWED_PROTOCOLS = ("https", "ssh", "file")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
#: scp-like ``user@host:path`` (git reads ``host:path`` as ssh when no ``/`` comes before the ``:``).
_SCP = re.compile(r"^(?:[A-Za-z0-9._~-]+@)?[A-Za-z0-9.-]+:(?!//)[^\s]")
_SHA = re.compile(r"^[0-9a-fA-F]{7,64}$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def location_problem(value: str) -> str | None:
    """Why ``value`` may not name a repository (None: it may): an ``https://``, ``ssh://`` or ``file://`` URL,
    scp-like ``git@host:owner/name``, or a local path; never one starting with ``-``, never ``ext::`` and the
    like, never a control character."""
    text = value.strip()
    if not text:
        return "is empty; give an https:// or ssh:// URL or a local path"
    if text.startswith("-"):
        # The value itself is not echoed: a URL may hold a token.
        return "starts with '-' (git would read it as an option); give an https:// or ssh:// URL or a path"
    if _CONTROL.search(text):
        return "holds a control character"
    match = _SCHEME.match(text)
    if match:
        scheme = match.group(1).lower()
        if scheme not in ALLOWED_PROTOCOLS:
            return f"the '{scheme}://' transport is not allowed; use {', '.join(p + '://' for p in ALLOWED_PROTOCOLS)}"
        parts = urlsplit(text)
        if scheme != "file" and not parts.hostname:
            return f"{scheme}:// URL without a host"
        if (parts.hostname or "").startswith("-") or (parts.username or "").startswith("-"):
            return "a host or user name starting with '-' is not allowed"
        if scheme != "https" and parts.password is not None:
            # Only https credentials go through a credential helper (prdigest.collect.git.argv.Remote); any other
            # URL reaches git as it is, and git keeps it in the clone's config and shows it in its argv.
            return (f"the {scheme}:// URL carries a password (user:PASSWORD@host), which git would keep in the "
                    "clone's config; ssh signs in with a key (ssh-agent or ~/.ssh/config): give the URL without it"
                    if scheme == "ssh" else f"the {scheme}:// URL carries a password; give it without one")
        return None
    if "::" in text.split("/", 1)[0]:
        # <transport>::<address> runs git-remote-<transport> (``ext::sh -c …`` runs a shell command).
        return (f"the '{text.split('::', 1)[0][:20]}::' remote helper is not allowed; use an https:// or ssh:// "
                "URL")
    if _SCP.match(text):
        host = text.split("@", 1)[-1] if "@" in text.split(":", 1)[0] else text
        if host.startswith("-"):
            return "a host starting with '-' is not allowed"
        return None
    return None  # a local path (relative or absolute)


def sha_problem(value: str) -> str | None:
    """Why ``value`` is not a commit id (7 to 64 hexadecimal digits), or None."""
    return None if _SHA.fullmatch(value or "") else f"{value[:50]!r} is not a commit id (7-64 hex digits)"


def ref_problem(value: str) -> str | None:
    """Why ``value`` is not a ref name ``git check-ref-format --allow-onelevel`` accepts (and not starting with
    ``-``), or None."""
    if not value:
        return "is empty"
    if value.startswith("-"):
        return f"{value[:50]!r} starts with '-' (git would read it as an option)"
    if value == "@" or value.endswith((".", "/", ".lock")) or value.startswith("/"):
        return f"{value[:50]!r} is not a valid ref name"
    if any(bad in value for bad in ("..", "@{", "//", "\\", " ", "~", "^", ":", "?", "*", "[")) \
            or _CONTROL.search(value):
        return f"{value[:50]!r} is not a valid ref name"
    if any(part.startswith(".") or part.endswith(".lock") for part in value.split("/")):
        return f"{value[:50]!r} is not a valid ref name"
    return None


def checked(kind: str, value: str) -> str:
    """``value`` when it may reach git's argv as a ``kind`` ("location", "sha", "ref"); else ValueError."""
    problem = {"location": location_problem, "sha": sha_problem, "ref": ref_problem}[kind](value)
    if problem:
        raise ValueError(problem)
    return value
