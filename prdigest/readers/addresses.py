"""How each medium addresses a reader in the readers file: one :class:`AddressField` per medium, declared by the
medium's package as an entry point in the ``pr_digest.addresses`` group (the entry point's name is the readers
file's key and the medium's name), pr-digest's own e-mail, Slack and Feishu among them (pyproject.toml).

The readers file, the preferences form (``digest web``), the editors' notices and ``digest readers`` read the
addresses a reader has through this registry; none of them names a medium. An address declaration is light (a
pattern and a check, no renderer, no client library), so reading a readers file imports no medium.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from prdigest.kernel.registry import Registry

ADDRESSES_GROUP = "pr_digest.addresses"


@dataclass(frozen=True)
class AddressField:
    """A medium's address in the readers file: the key, what a valid one looks like, and what it says when not."""

    #: The readers file's key, and the medium's name (``email``, ``slack``, a plugin's ``toy``).
    name: str
    #: What an address must match, whole (``fullmatch``).
    pattern: str
    #: Why a value is refused, as a phrase after "'VALUE' is not " (e.g. "a Slack channel (#name or C… ID)").
    help: str
    #: A check beyond the pattern, run first: the problem as a phrase after "'VALUE' ", or None.
    check: Callable[[str], str | None] | None = None
    #: Whether an address reaches one person only (their unsubscribe may stop it); None: never (a shared
    #: channel or group: one member's unsubscribe must not stop it for the others).
    personal: Callable[[str], bool] | None = None

    def problem(self, value: str) -> str | None:
        """Why ``value`` is not an address of this medium (one line), or None."""
        if self.check is not None and (found := self.check(value)):
            return f"{value!r} {found}"
        if not re.fullmatch(self.pattern, value):
            return f"{value!r} is not {self.help}"
        return None


class AddressRegistry(Registry[AddressField]):
    """The address fields a readers file may carry, by key."""

    what, flag, group = "address", "address", ADDRESSES_GROUP


#: Every medium's address field: the installed entry points and any registered in process
#: (``ADDRESSES.register(AddressField(...))`` before the readers file is read).
ADDRESSES = AddressRegistry()


# ---- the shipped media's addresses ---------------------------------------------------------------------------
#: ASCII only: a non-ASCII address needs SMTPUTF8, which not every server offers, so it is refused when
#: the file is loaded rather than failing mid-delivery (a domain can be written in its xn-- form).
_EMAIL = r"[!#-'*+\-/-9=?A-Z^-~]+(?:\.[!#-'*+\-/-9=?A-Z^-~]+)*@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+"


def _email_check(value: str) -> str | None:
    if any(c.isspace() or not c.isprintable() for c in value):
        return ("is not a single plain e-mail address: it has spaces or a line break in it (a YAML '|' block adds a "
                "newline): write the address alone on the key's line")
    if not value.isascii():
        return ("is not ASCII: pr-digest sends without SMTPUTF8, so write the domain in its xn-- form, or use an "
                "ASCII address")
    return None


EMAIL = AddressField("email", _EMAIL, "a single plain e-mail address (like name@example.com)", check=_email_check,
                     personal=lambda value: True)
#: Slack channel name (#name), channel ID (C…/G…), or user ID (U…/W…) for a DM (one person: personal).
SLACK = AddressField("slack", r"#[a-z0-9][a-z0-9_-]{0,79}|[CGDUW][A-Z0-9]{6,}",
                     "a Slack channel (#name or C…/G… ID) or user ID (U…/W…), on one line with nothing around it",
                     personal=lambda value: re.fullmatch(r"[UW][A-Z0-9]{6,}", value) is not None)
#: A Feishu/Lark group's custom bot, by the name its environment variables carry (URL and secret: never here).
FEISHU = AddressField("feishu", r"[a-z0-9][a-z0-9-]{0,62}",
                      "a Feishu group name: use lower-case letters, digits and '-' (its webhook URL goes in "
                      "DIGEST_FEISHU_<NAME>_URL, never in the readers file)")
