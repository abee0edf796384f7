"""A PostgreSQL restart in the middle of a delivery: the store reconnects, the same run finishes, and every
reader gets exactly one copy (a restart for a minor upgrade or a failover is routine for a team)."""

from __future__ import annotations

import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from prdigest.deliver.run import deliver
from prdigest.state.store import open_store
from tests.factories import open_ledger
from tests.pg import PostgresServer
from tests.servers.smtp_server import SmtpServer
from tests.test_delivery import PASSWORD, email_readers, plan, smtp_channel, week

pytestmark = pytest.mark.slow


def test_a_store_statement_after_a_restart_reconnects_and_runs(postgres_server: PostgresServer, pg_url: str) -> None:
    with open_store(pg_url) as store:
        store.execute("CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER)")
        store.execute("INSERT INTO t VALUES (?, ?)", ("a", 1))
        postgres_server.restart()
        store.execute("INSERT INTO t VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v", ("a", 2))
        assert store.fetchall("SELECT k, v FROM t") == [("a", 2)]
        postgres_server.restart()
        assert store.atomic(lambda s: s.execute("UPDATE t SET v = 3 WHERE k = ?", ("a",)).rowcount) == 1


def test_a_postgresql_restart_mid_delivery_finishes_the_run_with_one_copy_per_reader(
        postgres_server: PostgresServer, pg_url: str, tmp_path: Path) -> None:
    readers = email_readers(200)
    ed = week()
    restarted = threading.Event()
    with SmtpServer(tmp_path / "tls", password=PASSWORD) as smtp:
        for reader in readers:  # a slow provider: each 250 comes 50 ms late
            smtp.answer_late(reader.email, 0.05)

        def restart_after_40() -> None:
            while smtp.count < 40:
                time.sleep(0.01)
            postgres_server.restart()
            restarted.set()

        restarter = threading.Thread(target=restart_after_40, daemon=True)
        restarter.start()
        ledger = open_ledger(pg_url)
        try:
            report = deliver(ed.id, plan(ed, readers, ("email",)), {"email": smtp_channel(smtp)}, ledger)
            restarter.join(60)
            assert restarted.is_set() and smtp.count > 40
            counts = ledger.counts(ledger.edition(ed.id))
        finally:
            ledger.close()
        copies = Counter(a for m in smtp.messages for a in m.rcpt_tos)
    assert copies == Counter({r.email: 1 for r in readers})  # everyone, once
    assert len(report.sent) == 200 and counts["sent"] == 200 and counts["pending"] == counts["uncertain"] == 0
