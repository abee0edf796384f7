"""The seal of an edition record: an HMAC with a key kept outside the state database.

The hash only shows that body and hash agree; whoever can write the state database can rewrite
both consistently. So every record pr-digest writes also carries a *seal*: an HMAC-SHA256, under a key kept
outside the database (:class:`SealKey`: ``DIGEST_RECORD_SECRET``, or a key file beside a SQLite state file),
over the edition's key, revision, status and hash. A record is delivered or resent only when its seal checks
(:meth:`prdigest.state.record.EditionRecord.check_seal`, at every delivery and every ``digest resend``), so an approved
edition
rewritten in the database after its editor approved it is refused, not sent.

Threat model: the attacker can read and write the state database (a shared PostgreSQL account, a restored
backup, another tool with SQL access), but cannot read the workers' environment or the key file. They cannot
make a seal for content of their own, and cannot move a held or draft record to a status that delivers. They
can still replay a row pr-digest itself sealed earlier for the same edition and revision (e.g. set a delivered
record back to ``published``), which sends only what was approved, and the ledger never sends a row twice; and
they can delete rows (nothing is sent then). With a SQLite file and its key file in the same folder, anyone
with the folder has both: set ``DIGEST_RECORD_SECRET`` from a secret store where that matters.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import tempfile
from collections.abc import Sequence
from pathlib import Path

from pydantic import SecretStr

from prdigest.kernel.errors import ConfigError
from prdigest.kernel.keys import check_secret
from prdigest.kernel.rowseal import row_content
from prdigest.state.store import StateLocation

#: A secret of before a rotation (``DIGEST_RECORD_SECRET_PREVIOUS``) needs only the length the rule asked before
#: it was tightened (16): it checks old seals and makes none.
PREVIOUS_MIN = 16


class SealKey:
    """The key records are sealed with, kept outside the state database (see the module docstring)."""

    def __init__(self, key: bytes, origin: str, previous: tuple[bytes, ...] = ()) -> None:
        self._key = key
        #: Keys of before a rotation (``DIGEST_RECORD_SECRET_PREVIOUS``): they still check the records they
        #: sealed; every new seal uses the current key.
        self._previous = previous
        #: Where the key comes from, for messages (never the key itself).
        self.origin = origin

    def __repr__(self) -> str:
        return f"SealKey({self.origin})"

    @classmethod
    def from_secret(cls, secret: str, previous: str = "") -> "SealKey":
        """The key of ``DIGEST_RECORD_SECRET`` (refused unless strong: :func:`check_secret`), with the keys of
        ``previous`` (space-separated secrets of before a rotation) still accepted when a seal is checked. A
        previous secret needs only the length the rule asked before it was tightened, so a deployment can move
        off a weak secret without losing the editions sealed with it."""
        check_secret(secret, "DIGEST_RECORD_SECRET")
        old = tuple(previous.split())
        for value in old:
            if len(value) < PREVIOUS_MIN:
                raise ConfigError(f"DIGEST_RECORD_SECRET_PREVIOUS holds a secret of {len(value)} characters: each "
                                  f"must be at least {PREVIOUS_MIN} (secrets are separated by spaces)")
        return cls(_derive(secret), "DIGEST_RECORD_SECRET", tuple(_derive(value) for value in old))

    @staticmethod
    def check_setting(location: StateLocation, secret: SecretStr | None,
                      previous: SecretStr | None = None) -> None:
        """Refuse, before anything runs, a weak secret or a PostgreSQL state without one (no I/O)."""
        if secret is not None and secret.get_secret_value():
            SealKey.from_secret(secret.get_secret_value(), previous.get_secret_value() if previous else "")
        elif location.is_postgres or location.path is None:
            SealKey.for_state(location, None)

    @classmethod
    def for_state(cls, location: StateLocation, secret: SecretStr | None = None,
                  previous: SecretStr | None = None) -> "SealKey":
        """``DIGEST_RECORD_SECRET`` when set (and ``DIGEST_RECORD_SECRET_PREVIOUS``, checking only); else, for a
        SQLite file, the key file beside it (``<file>.key``, made on first use, readable by its owner only).
        PostgreSQL (workers on several machines) needs the secret: refused without it, naming the setting."""
        if secret is not None and secret.get_secret_value():
            return cls.from_secret(secret.get_secret_value(), previous.get_secret_value() if previous else "")
        if location.is_postgres or location.path is None:
            raise ConfigError(f"--state {location}: a PostgreSQL state database needs DIGEST_RECORD_SECRET (the same "
                              "on every worker and for digest resend): it seals each edition record, so one "
                              "rewritten in the database after its review is never sent")
        return cls._from_file(location.path.with_name(location.path.name + ".key"))

    @classmethod
    def _from_file(cls, path: Path) -> "SealKey":
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            _publish_new_key(path)
        text = path.read_text(encoding="ascii").strip()
        if len(text) != 64:
            raise ConfigError(f"{path}: not a pr-digest record key (64 hex digits); restore it, or delete it only "
                              "together with the state database beside it")
        return cls(bytes.fromhex(text), str(path))

    def seal(self, key: str, revision: int, status: str, content: str) -> str:
        """The seal of one record's (edition key, revision, status, content hash), under the current key."""
        return _seal(self._key, key, revision, status, content)

    def accepts(self, seal: str, key: str, revision: int, status: str, content: str) -> bool:
        """Whether ``seal`` is this record's seal under the current key or a previous one (constant time)."""
        return any([hmac.compare_digest(seal, _seal(k, key, revision, status, content))
                    for k in (self._key, *self._previous)])

    def seal_row(self, table: str, values: Sequence[object]) -> str:
        """The seal of one row of a state table that later runs deliver from (:mod:`prdigest.kernel.rowseal`)."""
        return _row_seal(self._key, table, values)

    def accepts_row(self, seal: str | None, table: str, values: Sequence[object]) -> bool:
        """Whether ``seal`` is that row's seal under the current key or a previous one; None never is."""
        return seal is not None and any([hmac.compare_digest(seal, _row_seal(k, table, values))
                                         for k in (self._key, *self._previous)])


def _publish_new_key(path: Path) -> None:
    """Make a new random key at ``path`` unless another process made one first. The key is written whole to a file
    of its own, then linked to ``path`` (which fails if ``path`` exists): ``path`` never holds a partial key, so a
    process racing here reads the winner's whole key, never an empty or half-written file."""
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".new", dir=path.parent)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(secrets.token_hex(32) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass  # another process published its key first: everyone uses that one
    finally:
        os.unlink(temporary)


def _derive(secret: str) -> bytes:
    return hashlib.sha256(b"pr-digest/edition-record-seal\0" + secret.encode()).digest()


def _row_seal(secret: bytes, table: str, values: Sequence[object]) -> str:
    return "hmac-sha256:" + hmac.new(secret, row_content(table, values), hashlib.sha256).hexdigest()


def _seal(secret: bytes, key: str, revision: int, status: str, content: str) -> str:
    message = "\0".join(("pr-digest/edition-record", key, str(revision), status, content)).encode()
    return "hmac-sha256:" + hmac.new(secret, message, hashlib.sha256).hexdigest()
