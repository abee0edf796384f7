"""How git is run on values others write: the pinned transports, and credentials kept out of argv and out of a
kept clone's ``config``. The values themselves are checked by :mod:`prdigest.kernel.gitvalues`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit, urlunsplit

from prdigest.kernel.gitvalues import ALLOWED_PROTOCOLS, checked, location_problem, ref_problem, sha_problem

__all__ = ["ALLOWED_PROTOCOLS", "PROTOCOL_CONFIG", "PROTOCOL_ENV", "Remote", "checked", "git_env",
           "location_problem", "ref_problem", "sha_problem"]

#: ``-c`` options put before every git subcommand: every transport refused but the allowed ones.
PROTOCOL_CONFIG: tuple[str, ...] = ("-c", "protocol.allow=never",
                                    *(x for p in ALLOWED_PROTOCOLS for x in ("-c", f"protocol.{p}.allow=always")))
#: The same pin for git's environment: ``GIT_ALLOW_PROTOCOL`` wins over any config, so an operator's own
#: setting (or a hostile one in the environment) cannot widen it.
PROTOCOL_ENV = {"GIT_ALLOW_PROTOCOL": ":".join(ALLOWED_PROTOCOLS)}
#: Environment variables the credential helper below reads (set for git's process only, never in argv).
USER_VAR, PASSWORD_VAR = "PRDIGEST_GIT_USERNAME", "PRDIGEST_GIT_PASSWORD"
#: A credential helper that answers from those variables: a constant (no user text in it), so a token from
#: a URL reaches git through the environment of its process instead of its argv or a config file.
_HELPER = (f'!f() {{ test "$1" = get || exit 0; printf "username=%s\\npassword=%s\\n" '
           f'"${USER_VAR}" "${PASSWORD_VAR}"; }}; f')

@dataclass(frozen=True)
class Remote:
    """A repository location split into what git may see (``url``, no credentials) and the credentials, which
    reach git only through :meth:`env` and :data:`CREDENTIAL_CONFIG`."""

    url: str
    username: str = ""
    password: str = ""

    @classmethod
    def parse(cls, location: str) -> "Remote":
        """Split the user info off an https URL (a token rides there as ``TOKEN@`` or ``user:TOKEN@``); any other
        location is kept as it is (an ssh user name is not a secret)."""
        text = location.strip()
        parts = urlsplit(text)
        if parts.scheme.lower() != "https" or "@" not in parts.netloc:
            return cls(text)
        host = parts.netloc.rpartition("@")[2]
        bare = urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
        return cls(bare, unquote(parts.username or ""), unquote(parts.password or ""))

    @property
    def has_credentials(self) -> bool:
        return bool(self.username or self.password)

    def config(self) -> tuple[str, ...]:
        """``-c`` options that make git ask :data:`_HELPER` (and nothing else) for this remote's credentials."""
        if not self.has_credentials:
            return ()
        return ("-c", "credential.helper=", "-c", f"credential.helper={_HELPER}")

    def env(self, base: Mapping[str, str]) -> dict[str, str]:
        """``base`` with the credentials for :meth:`config`'s helper."""
        env = dict(base)
        if self.has_credentials:
            env.update({USER_VAR: self.username, PASSWORD_VAR: self.password})
        return env


def git_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment every git process runs in: the pinned transports, no prompt, no pager."""
    env = dict(os.environ if base is None else base)
    env.pop(USER_VAR, None)
    env.pop(PASSWORD_VAR, None)
    env.update(PROTOCOL_ENV)
    env.update(GIT_TERMINAL_PROMPT="0", GIT_PAGER="cat")
    return env
