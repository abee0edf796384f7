"""The edition record after its review: an attacker who can write the state database rewrites an approved
edition consistently (body and hash); neither the next run nor `digest resend` may deliver it. Real runs of
the CLI against the local aiosmtpd server."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest
from pydantic import SecretStr
from typer.testing import CliRunner

from flows.cli import app
from prdigest.kernel.errors import ConfigError
from prdigest.state import variant_rows
from prdigest.state.store import StateLocation
from tests.conftest import SAMPLE
from tests.factories import open_ledger
from tests.servers.smtp_server import SmtpServer

READERS = """readers:
  - {id: ana, name: Ana, email: ana@example.com}
  - {id: bo, name: Bo, email: bo@example.com}
"""
INJECTED = "Urgent: rotate your credentials at https://evil.example.com/login"


def rewrite_consistently(state: Path) -> None:
    """What someone with write access to the state database does: new content, and the hashes that match it (with
    the variants in rows of their own: the parts' head hash, and the whole edition's hash over its rows)."""
    with sqlite3.connect(state) as db:
        (key, body, parts) = db.execute("SELECT key, body, parts FROM edition_records").fetchone()
        start = body.index('"headline":"') + len('"headline":"')
        forged = body[:start] + INJECTED + body[body.index('"', start):]
        if parts is None:
            db.execute("UPDATE edition_records SET body = ?, hash = ?",
                       (forged, "sha256:" + hashlib.sha256(forged.encode()).hexdigest()))
            return
        bodies = [b for (b,) in db.execute("SELECT body FROM edition_variants WHERE key = ? ORDER BY position",
                                           (key,))]
        listed = json.loads(parts)
        listed["head"] = variant_rows.digest(forged)
        db.execute("UPDATE edition_records SET body = ?, hash = ?, parts = ?",
                   (forged, variant_rows.whole_hash(forged, bodies),
                    json.dumps(listed, ensure_ascii=False, sort_keys=True, separators=(",", ":"))))


@pytest.fixture
def world(tmp_path: Path):
    (tmp_path / "readers.yaml").write_text(READERS, encoding="utf-8")
    with SmtpServer(tmp_path / "tls") as smtp:
        env = {"DIGEST_SMTP_HOST": "127.0.0.1", "DIGEST_SMTP_PORT": str(smtp.port), "DIGEST_SMTP_USER": smtp.user,
               "DIGEST_SMTP_PASSWORD": smtp.password, "DIGEST_FROM": "pr-digest <digest@example.com>",
               "SSL_CERT_FILE": str(smtp.cert), "DIGEST_UNSUBSCRIBE_URL": "https://example.com/u/{reader}",
               "COLUMNS": "300"}
        args = ["run", "--source", f"jsonl:{SAMPLE}", "--since", "2026-11-16", "--until", "2026-11-17",
                "--deliver", "smtp", "--readers", str(tmp_path / "readers.yaml"), "--out", str(tmp_path / "out"),
                "--state", str(tmp_path / "state.sqlite"), "--language", "en"]
        yield tmp_path, smtp, env, args


def test_an_approved_edition_rewritten_in_the_database_is_never_delivered(world) -> None:
    """Failed before the fix: the next run delivered the rewritten headline to Bo (body and hash agreed)."""
    root, smtp, env, args = world
    smtp.defer.add("bo@example.com")  # greylisted: Bo's row stays pending for the next run
    first = CliRunner().invoke(app, args, env=env)
    assert [a for m in smtp.messages for a in m.rcpt_tos] == ["ana@example.com"], first.output
    status = CliRunner().invoke(app, ["status", "vllm-project/vllm 2026-11-16..2026-11-17", "--state",
                                      str(root / "state.sqlite")], env={"COLUMNS": "300"})
    assert "entries published, sealed" in " ".join(status.output.split())
    smtp.defer.clear()
    rewrite_consistently(root / "state.sqlite")
    second = CliRunner().invoke(app, args, env=env)
    said = " ".join(second.output.split())
    assert second.exit_code != 0 and "rewritten in the state store after it was sealed" in said, said
    assert [a for m in smtp.messages for a in m.rcpt_tos] == ["ana@example.com"]  # Bo got nothing
    assert all(INJECTED not in m.message.get_body(("plain",)).get_content() for m in smtp.messages)


def test_resend_checks_the_seal_too(world) -> None:
    """Failed before the fix: `digest resend --uncertain` sent the rewritten edition again."""
    root, smtp, env, args = world
    first = CliRunner().invoke(app, args, env=env)
    assert first.exit_code == 0, first.output
    ledger = open_ledger(root / "state.sqlite")
    (key,) = ledger.editions()
    with sqlite3.connect(root / "state.sqlite") as db:  # as a lost answer after DATA leaves it
        db.execute("UPDATE delivery_ledger SET status = 'uncertain' WHERE reader = 'bo'")
    ledger.close()
    rewrite_consistently(root / "state.sqlite")
    resent = CliRunner().invoke(app, ["resend", key, "--uncertain", "--readers", str(root / "readers.yaml"),
                                      "--state", str(root / "state.sqlite")], env=env)
    said = " ".join(resent.output.split())
    assert resent.exit_code != 0 and "rewritten in the state store" in said, said
    assert len(smtp.messages) == 2


def test_the_key_is_outside_the_database_and_postgresql_needs_the_secret(tmp_path: Path) -> None:
    from prdigest.state.record import SealKey

    location = StateLocation.parse(tmp_path / "state.sqlite")
    key = SealKey.for_state(location)
    key_file = tmp_path / "state.sqlite.key"
    assert key_file.stat().st_mode & 0o777 == 0o600
    assert SealKey.for_state(location).seal("k", 1, "approved", "sha256:x") == key.seal("k", 1, "approved", "sha256:x")
    # Another folder's key (or the secret) seals differently: a record sealed under one does not check under another.
    other = SealKey.for_state(StateLocation.parse(tmp_path / "b" / "state.sqlite"))
    assert other.seal("k", 1, "approved", "sha256:x") != key.seal("k", 1, "approved", "sha256:x")
    by_secret = SealKey.for_state(location, SecretStr("a-record-secret-0123456789-abcdefghij"))
    assert by_secret.origin == "DIGEST_RECORD_SECRET"
    assert by_secret.seal("k", 1, "approved", "sha256:x") != key.seal("k", 1, "approved", "sha256:x")
    assert key.seal("k", 1, "approved", "sha256:x") != key.seal("k", 1, "held", "sha256:x")
    with pytest.raises(ConfigError, match="PostgreSQL state database needs DIGEST_RECORD_SECRET"):
        SealKey.check_setting(StateLocation.parse("postgresql://u@db/digest"), None)
    with pytest.raises(ConfigError, match="DIGEST_RECORD_SECRET is 5 characters"):
        SealKey.check_setting(location, SecretStr("short"))
    # Long but guessable: the same rule as DIGEST_WEB_SECRET (one rule for every HMAC key), and the message
    # names the setting, never the secret.
    for weak in ("a" * 40, "ab" * 20, "0123456789abcdef"):
        with pytest.raises(ConfigError, match="DIGEST_RECORD_SECRET is .* characters") as refused:
            SealKey.check_setting(location, SecretStr(weak))
        assert weak not in str(refused.value)
    key_file.write_text("not a key\n", encoding="ascii")
    with pytest.raises(ConfigError, match="not a pr-digest record key"):
        SealKey.for_state(location)


def test_a_held_edition_set_to_approved_in_the_database_is_not_delivered(tmp_path: Path) -> None:
    """The seal covers the status: a record moved from held to approved by SQL is refused."""
    from prdigest.state import record as records
    from prdigest.state.record import SealKey
    from prdigest.state.store import open_store
    from tests.factories import edition, entry

    key = SealKey.for_state(StateLocation.parse(tmp_path / "s.sqlite"))
    held = edition([entry(1, ["kernels"], "deep-read")])
    with open_store(tmp_path / "s.sqlite") as store:
        drafted = records.save(store, held, records.Status.DRAFTED, seal=key)
        records.save(store, held, records.Status.HELD, expect=drafted, seal=key)
        records.load(store, held.key).check_seal(key)
        store.execute("UPDATE edition_records SET status = 'approved'")
        with pytest.raises(records.RecordError, match="rewritten in the state store"):
            records.load(store, held.key).check_seal(key)
        store.execute("UPDATE edition_records SET seal = NULL")
        with pytest.raises(records.RecordError, match="carries no seal"):
            records.load(store, held.key).check_seal(key)


def test_the_record_secret_can_be_rotated_without_losing_the_editions_it_sealed(tmp_path: Path) -> None:
    """A deployment on a secret the tightened rule refuses (or a leaked one) moves to a new one: the old one in
    DIGEST_RECORD_SECRET_PREVIOUS still checks the records it sealed; new seals use only the new one; a record
    rewritten in the database is refused under either."""
    from prdigest.state.record import SealKey

    location = StateLocation.parse(tmp_path / "state.sqlite")
    old_secret = "team-record-secret-16+"  # 22 characters: accepted before the rule asked for 32
    new_secret = "Zq3v9-Lw7hT2xK8pYc4mN6bR1sD5fG0jUe"
    old_key = SealKey(hashlib.sha256(b"pr-digest/edition-record-seal\0" + old_secret.encode()).digest(), "old")
    sealed_before = old_key.seal("ed", 1, "approved", "sha256:x")
    rotated = SealKey.for_state(location, SecretStr(new_secret), SecretStr(old_secret))
    assert rotated.accepts(sealed_before, "ed", 1, "approved", "sha256:x")
    assert not rotated.accepts(sealed_before, "ed", 1, "approved", "sha256:rewritten")
    assert not rotated.accepts(sealed_before, "ed", 1, "delivered", "sha256:x")
    # New seals are the new key's: a worker still on the old secret alone does not accept them.
    assert rotated.seal("ed", 2, "approved", "sha256:y") != old_key.seal("ed", 2, "approved", "sha256:y")
    assert not old_key.accepts(rotated.seal("ed", 2, "approved", "sha256:y"), "ed", 2, "approved", "sha256:y")
    # Without the previous secret the old seal no longer checks; the old secret alone is refused as the key.
    assert not SealKey.for_state(location, SecretStr(new_secret)).accepts(sealed_before, "ed", 1, "approved",
                                                                       "sha256:x")
    with pytest.raises(ConfigError, match="DIGEST_RECORD_SECRET is 22 characters"):
        SealKey.check_setting(location, SecretStr(old_secret))
    with pytest.raises(ConfigError, match="DIGEST_RECORD_SECRET_PREVIOUS holds a secret of 5 characters"):
        SealKey.check_setting(location, SecretStr(new_secret), SecretStr(f"{old_secret} short"))


def _key_in_child(args: tuple[str, object]) -> str:
    """One process's key for the state file, made or read as every run makes it, after the others are ready."""
    from prdigest.state.record import SealKey

    path, barrier = args
    barrier.wait()  # type: ignore[attr-defined]
    try:
        return SealKey.for_state(StateLocation.parse(path)).seal("k", 1, "approved", "sha256:x")
    except ConfigError as exc:
        return f"refused: {exc}"


def test_processes_racing_on_a_fresh_key_file_all_get_the_one_whole_key(tmp_path: Path) -> None:
    """Before the fix the file was created empty and then written: a process racing in between read it empty
    and was refused ("not a pr-digest record key"), or a torn key."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    with context.Manager() as manager, context.Pool(6) as pool:
        for attempt in range(60):
            barrier = manager.Barrier(6)
            path = str(tmp_path / f"s{attempt}" / "state.sqlite")
            seals = pool.map(_key_in_child, [(path, barrier)] * 6)
            assert len(set(seals)) == 1 and seals[0].startswith("hmac-sha256:"), seals
            assert [p.name for p in (tmp_path / f"s{attempt}").iterdir()] == ["state.sqlite.key"]  # no leftovers
