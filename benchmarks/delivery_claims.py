"""Delivery with claims: N readers e-mailed by one deliverer, then by four concurrent deliverer processes
on the same edition, on SQLite and on PostgreSQL; messages per second and duplicates at the server.

    .venv/bin/python -m benchmarks.delivery_claims [--readers 10000] [--backends sqlite postgresql]
                                                   [--deliverers 1 4] [--write]

The edition and readers are the Delivery benchmark's (150 entries, 50 distinct filters, STARTTLS + AUTH to
a local aiosmtpd server in its own process). Each deliverer process renders its variants first, then all
start together; the time is from that start to the last deliverer's end. The server counts the messages
it accepted per recipient: duplicates must be 0 and every reader must have one. PostgreSQL is a throwaway
cluster (Debian's binaries, initdb in a temp folder, fsync off like the tests'). ``--write`` replaces the
"Delivery with claims" section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.factories import open_ledger

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.delivery import ENTRIES, FILTERS, PASSWORD, SENDER, filters  # noqa: E402
from benchmarks.report import write_section  # noqa: E402


def _serve(conn, cert_dir: str, port: int) -> None:
    """The SMTP server process: count messages per recipient until told to stop, then report."""
    from tests.servers.smtp_server import SmtpServer

    server = SmtpServer(Path(cert_dir), password=PASSWORD, port=port, record=False).start()
    conn.send("ready")
    conn.recv()
    counts = server.recipients
    conn.send({"messages": server.count, "sessions": server.sessions, "distinct": len(counts),
               "duplicates": sum(n - 1 for n in counts.values() if n > 1)})
    server.stop()


def _deliverer(conn, n_readers: int, state: str, port: int, cert: str) -> None:
    """One deliverer process: render, say ready, wait for the start, deliver, report."""
    import ssl

    from pydantic import SecretStr

    from benchmarks.email_size import WEEK, entries
    from flows.media import EMAIL
    from prdigest.connect.variants import plan_variants
    from prdigest.deliver.media import ComposeContext, RenderContext
    from prdigest.deliver.run import deliver, plan_deliveries
    from prdigest.deliver.smtp import SmtpChannel
    from prdigest.kernel.models import Edition
    from prdigest.readers.file import Reader

    edition = Edition(repo="vllm-project/vllm", since=WEEK, until=WEEK.replace(day=23), language="zh-CN",
                      generated_at=WEEK, entries=entries(ENTRIES))
    flts = filters(edition)
    readers = [Reader(id=f"reader-{i:05d}", name=f"Reader {i}", email=f"reader-{i:05d}@example.com",
                      subsystems=tuple(sorted(f.subsystems)), exclude=tuple(sorted(f.exclude)),
                      min_verdict=f.min_verdict)
               for i, f in ((i, flts[i % FILTERS]) for i in range(n_readers))]
    variants, _ = plan_variants(edition, readers)
    rendered = [(v.readers, {"email": EMAIL.render(edition, v, RenderContext())}) for v in variants]
    compose = ComposeContext(edition=edition, sender=SENDER, unsubscribe_template="https://digest.example.com/u/{reader}")
    deliveries = plan_deliveries(rendered, [EMAIL], compose)
    channel = SmtpChannel(host="127.0.0.1", port=port, user="digest-bot", password=SecretStr(PASSWORD),
                          sender=SENDER, ssl_context=ssl.create_default_context(cafile=cert))
    ledger = open_ledger(state)
    channel.check()
    conn.send("ready")
    conn.recv()  # go
    started = time.perf_counter()
    report = deliver(edition.id, deliveries, {"email": channel}, ledger)
    ended = time.perf_counter()
    ledger.close()
    conn.send({"sent": len(report.sent), "already": len(report.already), "pending": len(report.pending),
               "elsewhere": sum(1 for r in report.results if r.outcome.value == "elsewhere"),
               "seconds": ended - started, "end": time.time()})


@contextmanager
def postgres() -> Iterator[str]:
    """A throwaway PostgreSQL cluster (as the tests start it); yields a database URL."""
    from tests.pg import MISSING, _binaries, throwaway_cluster

    if _binaries() is None:
        raise SystemExit(MISSING)
    with throwaway_cluster(prefix="prdigest-bench-pg-") as server:
        yield server.url()


def _receive(pipe, proc):
    """The next message of a deliverer process, or an exit if it died (its traceback is on stderr)."""
    while not pipe.poll(1):
        if not proc.is_alive():
            raise SystemExit(f"a deliverer process ended with exit code {proc.exitcode}")
    return pipe.recv()


def one(n_readers: int, deliverers: int, state: str) -> dict:
    """One configuration: a fresh state database, a server process, ``deliverers`` deliverer processes."""
    from tests.servers.smtp_server import free_port, make_certificate

    open_ledger(state).close()  # migrated before the race
    ctx = mp.get_context("spawn")
    with tempfile.TemporaryDirectory() as tmp:
        cert, _ = make_certificate(Path(tmp) / "tls")
        port = free_port()
        server_end, child = ctx.Pipe()
        server = ctx.Process(target=_serve, args=(child, str(Path(tmp) / "tls"), port))
        server.start()
        assert server_end.recv() == "ready"
        pipes, procs = [], []
        for _ in range(deliverers):
            mine, theirs = ctx.Pipe()
            proc = ctx.Process(target=_deliverer, args=(theirs, n_readers, state, port, str(cert)))
            proc.start()
            pipes.append(mine)
            procs.append(proc)
        for pipe, proc in zip(pipes, procs):
            assert _receive(pipe, proc) == "ready"
        started = time.time()
        for pipe in pipes:
            pipe.send("go")
        results = [_receive(pipe, proc) for pipe, proc in zip(pipes, procs)]
        for proc in procs:
            proc.join(60)
        wall = max(r["end"] for r in results) - started
        server_end.send("stop")
        got = server_end.recv()
        server.join(10)
    ledger = open_ledger(state)
    key = ledger.editions()[0]
    counts = ledger.counts(key)
    ledger.close()
    sent = sum(r["sent"] for r in results)
    return {"readers": n_readers, "deliverers": deliverers, "backend": "postgresql" if "://" in state else "sqlite",
            "sent": sent, "per_deliverer": [r["sent"] for r in results], "wall_s": wall, "msgs_per_s": sent / wall,
            "server": got, "ledger": counts, "load": os.getloadavg()[0]}


def section(results: list[dict], command: str, baseline: str) -> str:
    """The "Delivery with claims" section of BENCHMARKS.md."""
    lines = [
        f"Command: `{command}` (each configuration on a fresh state database; the aiosmtpd server, STARTTLS + "
        "AUTH, in its own process; every process on the same 2 shared cores).",
        "",
        f"{ENTRIES}-entry zh-CN edition, readers over {FILTERS} filters, every reader by e-mail (the Delivery "
        "benchmark's set-up), through `prdigest.deliver.run.deliver` with claims: per message a claim (8 rows a "
        "transaction), a commit recording that the push begins, the SMTP transaction, a commit of the outcome. "
        "Concurrent deliverers are separate processes on one edition, each with its own SMTP session and "
        "state-database connection, started together after rendering. Duplicates and readers missed are counted "
        "at the server, per recipient.",
        "",
        "| backend | readers | deliverers | sent (per deliverer) | server got | duplicates | readers missed | wall s "
        "| messages/s | load |",
        "| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        per = " + ".join(f"{n:,}" for n in r["per_deliverer"])
        lines.append(f"| {r['backend']} | {r['readers']:,} | {r['deliverers']} | {r['sent']:,} ({per}) "
                     f"| {r['server']['messages']:,} | {r['server']['duplicates']} "
                     f"| {r['readers'] - r['server']['distinct']} | {r['wall_s']:.1f} | {r['msgs_per_s']:.0f} "
                     f"| {r['load']:.1f} |")
    lines += ["", baseline]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--readers", type=int, default=10000)
    parser.add_argument("--backends", nargs="+", default=["sqlite", "postgresql"])
    parser.add_argument("--deliverers", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--baseline", default="", help="a sentence on the figure before claims, for the section")
    parser.add_argument("--write", action="store_true", help="replace this section of BENCHMARKS.md")
    args = parser.parse_args()
    results = []
    for backend in args.backends:
        for deliverers in args.deliverers:
            with tempfile.TemporaryDirectory() as tmp:
                if backend == "sqlite":
                    result = one(args.readers, deliverers, str(Path(tmp) / "state.sqlite"))
                else:
                    with postgres() as url:
                        result = one(args.readers, deliverers, url)
            results.append(result)
            print(json.dumps(result), flush=True)
    command = ".venv/bin/python -m benchmarks.delivery_claims " + " ".join(
        [f"--readers {args.readers}", "--backends " + " ".join(args.backends),
         "--deliverers " + " ".join(map(str, args.deliverers)), "--write"])
    body = section(results, command, args.baseline)
    print(body)
    if args.write:
        write_section("Delivery with claims", body)


if __name__ == "__main__":
    main()
