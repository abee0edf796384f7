"""Delivery at scale: N readers in 50 distinct filters on a 150-entry edition, e-mailed over one SMTP
session (STARTTLS + AUTH) to a local aiosmtpd server running in its own process.

    .venv/bin/python -m benchmarks.delivery [--readers 1000 10000] [--write]

Per size, in a fresh process: renders (counted calls of the email and Slack media's ``render``: one per
variant, never per reader), the delivery loop with a ledger (``deliver``: lazily composed messages, a
ledger row committed before and after each send), messages per second, SMTP sessions used, and peak RSS of the
delivering process (``ru_maxrss``; the server's memory is not counted). ``--write`` replaces the
"Delivery" section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.factories import open_ledger

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.report import write_section  # noqa: E402

FILTERS = 50
ENTRIES = 150
SENDER = "pr-digest <digest@example.com>"
PASSWORD = "bench-pa55word"


def _serve(conn, cert_dir: str, port: int) -> None:
    """The SMTP server process: count messages until told to stop, then report."""
    from tests.servers.smtp_server import SmtpServer

    server = SmtpServer(Path(cert_dir), password=PASSWORD, port=port, record=False).start()
    conn.send("ready")
    conn.recv()
    conn.send({"messages": server.count, "sessions": server.sessions, "bytes": server.bytes})
    server.stop()


def filters(edition):
    """``FILTERS`` distinct reader filters that each select at least one published entry."""
    from itertools import combinations

    from prdigest.connect.variants import Filter
    from prdigest.kernel.models import Verdict

    subs = sorted({s for e in edition.entries for s in e.subsystems})
    candidates = [Filter()] + [Filter(frozenset({s})) for s in subs]
    candidates += [Filter(frozenset(pair)) for pair in combinations(subs, 2)]
    out: list[Filter] = []
    for base in candidates:
        for verdict in (Verdict.SKIP, Verdict.SKIM, Verdict.DEEP_READ):
            flt = Filter(base.subsystems, frozenset({"docs"}) if len(out) % 3 == 2 else frozenset(), verdict)
            if flt not in out and any(flt.selects(e) for e in edition.entries):
                out.append(flt)
            if len(out) == FILTERS:
                return out
    raise SystemExit(f"only {len(out)} distinct non-empty filters")


def one(n_readers: int) -> dict:
    """One size, measured in this (fresh) process."""
    import ssl
    from dataclasses import replace

    from pydantic import SecretStr

    from benchmarks.email_size import WEEK, entries
    from flows.media import EMAIL, SLACK
    from prdigest.connect.variants import plan_variants
    from prdigest.deliver.media import ComposeContext, MediaRegistry, Medium, RenderContext
    from prdigest.deliver.run import deliver, plan_deliveries
    from prdigest.deliver.smtp import SmtpChannel
    from prdigest.kernel.models import Edition
    from prdigest.readers.file import Reader
    from tests.servers.smtp_server import free_port, make_certificate

    calls = {"email": 0, "slack": 0}

    def counted(medium: Medium) -> Medium:
        def render(*args):
            calls[medium.name] += 1
            return medium.render(*args)
        return replace(medium, render=render)

    media = MediaRegistry([counted(EMAIL), counted(SLACK)])

    edition = Edition(repo="vllm-project/vllm", since=WEEK, until=WEEK.replace(day=23), language="zh-CN",
                      generated_at=WEEK, entries=entries(ENTRIES))
    flts = filters(edition)
    readers = [Reader(id=f"reader-{i:05d}", name=f"Reader {i}", email=f"reader-{i:05d}@example.com",
                      subsystems=tuple(sorted(f.subsystems)), exclude=tuple(sorted(f.exclude)),
                      min_verdict=f.min_verdict)
               for i, f in ((i, flts[i % FILTERS]) for i in range(n_readers))]

    with tempfile.TemporaryDirectory() as tmp:
        cert, _ = make_certificate(Path(tmp) / "tls")
        port = free_port()
        ctx = mp.get_context("spawn")
        parent, child = ctx.Pipe()
        server = ctx.Process(target=_serve, args=(child, str(Path(tmp) / "tls"), port))
        server.start()
        assert parent.recv() == "ready"
        try:
            started = time.perf_counter()
            variants, idle = plan_variants(edition, readers)
            context = RenderContext()
            # As the pipeline's render step: each variant rendered once per medium, shared by its readers.
            rendered = [(v.readers, {m.name: m.render(edition, v, context) for m in media}) for v in variants]
            render_s = time.perf_counter() - started
            html_kb = sorted(len(r["email"].payload.html.encode()) / 1024 for _, r in rendered)

            compose = ComposeContext(edition=edition, sender=SENDER,
                                     unsubscribe_template="https://digest.example.com/u/{reader}")
            deliveries = plan_deliveries(rendered, [media["email"]], compose)
            rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            channel = SmtpChannel(host="127.0.0.1", port=port, user="digest-bot", password=SecretStr(PASSWORD),
                                  sender=SENDER, ssl_context=ssl.create_default_context(cafile=str(cert)))
            ledger = open_ledger(Path(tmp) / "state.sqlite")
            started = time.perf_counter()
            channel.check()
            report = deliver(edition.key, deliveries, {"email": channel}, ledger)
            deliver_s = time.perf_counter() - started
            rss_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            counts = ledger.counts(edition.key)
            ledger.close()
        finally:
            parent.send("stop")
            got = parent.recv()
            server.join(10)
    return {
        "readers": n_readers, "entries": ENTRIES, "variants": len(variants), "idle": len(idle),
        "renders_email": calls["email"], "renders_slack": calls["slack"], "render_s": render_s,
        "html_kb_min": html_kb[0], "html_kb_max": html_kb[-1],
        "sent": len(report.sent), "ledger": counts, "server": got, "connections": channel.connections,
        "deliver_s": deliver_s, "msgs_per_s": len(report.sent) / deliver_s,
        "rss_before_mib": rss_before, "rss_peak_mib": rss_peak, "load": os.getloadavg()[0],
    }


def section(results: list[dict]) -> str:
    """The Delivery section of BENCHMARKS.md for these results."""
    lines = [
        "Command: `.venv/bin/python -m benchmarks.delivery --write` (each size in a fresh process; the local "
        "aiosmtpd server, STARTTLS + AUTH, runs in another process on the same 2 cores).",
        "",
        f"{ENTRIES}-entry zh-CN edition, readers spread over {FILTERS} distinct filters; every reader by e-mail, "
        "through the delivery loop with a ledger (`prdigest.deliver.run.deliver`: messages composed lazily, the body "
        "encoded once per variant, one ledger commit per message right after the server's 250; SQLite WAL with "
        "the default synchronous=FULL). \"load\" is the machine's 1-minute load average at the end of each "
        "size (other sessions share the 2 cores), so throughput is noisy.",
        "",
        "| readers | variants | renders (email / slack) | render s | HTML KiB (min–max) | sent | SMTP sessions "
        "| deliver s | messages/s | peak RSS MiB (before delivery → peak) | load |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        lines.append(
            f"| {r['readers']:,} | {r['variants']} | {r['renders_email']} / {r['renders_slack']} | {r['render_s']:.2f} "
            f"| {r['html_kb_min']:.0f}–{r['html_kb_max']:.0f} | {r['sent']:,} (server got {r['server']['messages']:,}) "
            f"| {r['server']['sessions']} | {r['deliver_s']:.1f} | {r['msgs_per_s']:.0f} "
            f"| {r['rss_before_mib']:.0f} → {r['rss_peak_mib']:.0f} | {r.get('load', float('nan')):.1f} |")
    lines += ["", "Renders stay at one per variant whatever the number of readers. Memory grows only with the "
              "per-reader bookkeeping (reader, planned delivery, ledger row: a few KiB each), never with message "
              "size: each message is composed just before it is sent and dropped after. Where the time goes "
              "(cProfile, 300 readers, under load): about half waiting for aiosmtpd's reply (the test server is "
              "pure Python), a fifth the ledger's fsync'd commit, the rest our CPU (mostly `email` flattening). "
              "Throughput moves 3-4x with the other sessions' load on this shared 2-core machine: a run at load "
              "average ~6 measured 25 (1,000) and 41 (10,000) messages/s. Two changes made here, measured on "
              "1,000 readers in back-to-back runs: TCP_NODELAY on the client socket (Nagle + delayed ACK "
              "cost ~40 ms a message) 17 → 29 messages/s; encoding each variant's body once instead of per "
              "reader 29 → 52."]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--readers", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--write", action="store_true", help="replace the Delivery section of BENCHMARKS.md")
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one)))
        return
    results = []
    for n in args.readers:
        child = subprocess.run([sys.executable, "-m", "benchmarks.delivery", "--one", str(n)], cwd=ROOT,
                               capture_output=True, text=True, check=True)
        result = json.loads(child.stdout.strip().splitlines()[-1])
        results.append(result)
        print(json.dumps(result), flush=True)
    body = section(results)
    print(body)
    if args.write:
        write_section("Delivery", body)


if __name__ == "__main__":
    main()
