"""A whole edition run at scale: 300 PRs × 10,000 readers in thousands of distinct filters, rendered and
delivered to the outbox, through the pipeline `digest run` uses (offline drafter, auto approval, SQLite state).

    .venv/bin/python -m benchmarks.scale [--prs 300] [--readers 1000 10000] [--history GIT_DIR] [--write]

Per size, in a fresh process (so peak RSS is that size's): the PRs are the shipped sample week's, copied with
new numbers; each reader follows one to three subsystems (or all), sometimes excludes one, asks for a lowest
verdict and sometimes a smaller read-first budget, and reads by e-mail only, Slack only, both, or e-mail and a
Feishu group. The run is :meth:`EditionPipeline.run` (collect, draft, connect, review, render, publish,
deliver); the render and deliver steps are timed apart, renders are counted per medium, and peak RSS is the
process's ``ru_maxrss``. ``--write`` replaces the "Scale" section of BENCHMARKS.md.

``--history GIT_DIR`` (``--until``, default 2026-05-31) takes the PRs from a real repository's history instead
(:mod:`benchmarks.real_week`: the last N merged PRs, their real titles, messages, files and sizes; readers follow
its top-level folders, as the folder classifier names them) and writes the "Scale: real PRs" section.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.report import write_section  # noqa: E402

SAMPLE = ROOT / "prdigest" / "collect" / "data" / "vllm-sample-week.jsonl"
#: Share of readers per way of reading (the rest: e-mail only).
SLACK_ONLY, BOTH, FEISHU = 0.2, 0.15, 0.05


def write_prs(path: Path, n: int) -> None:
    """``n`` PRs from the sample week, numbered apart past the first 58, merged in the sample's week."""
    records = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]
    with path.open("w", encoding="utf-8") as out:
        for i in range(n):
            r = dict(records[i % len(records)])
            copy = i // len(records)
            if copy:
                r["number"] += 100_000 * copy
                r["url"] = r["url"].rsplit("/", 1)[0] + f"/{r['number']}"
                r["title"] = f"{r['title']} (part {copy + 1})"
            out.write(json.dumps(r, ensure_ascii=False) + "\n")


def write_readers(path: Path, n: int, subsystems: list[str], seed: int = 30) -> None:
    """``n`` readers with random filters and media (the same for every run of one size)."""
    rng = random.Random(seed)
    lines = ["readers:"]
    for i in range(n):
        rid = f"reader-{i:05d}"
        lines += [f"  - id: {rid}", f"    name: Reader {i}"]
        roll = rng.random()
        if roll < SLACK_ONLY:
            lines.append(f"    slack: \"#chan-{i:05d}\"")
        elif roll < SLACK_ONLY + BOTH:
            lines += [f"    email: {rid}@example.com", f"    slack: \"#chan-{i:05d}\""]
        elif roll < SLACK_ONLY + BOTH + FEISHU:
            lines += [f"    email: {rid}@example.com", f"    feishu: group-{i:05d}"]
        else:
            lines.append(f"    email: {rid}@example.com")
        if rng.random() > 0.05:  # 5 % follow everything
            follow = rng.sample(subsystems, rng.choice((1, 2, 2, 3)))
            lines.append(f"    subsystems: [{', '.join(follow)}]")
            if rng.random() < 0.3:
                lines.append(f"    exclude: [{rng.choice([s for s in subsystems if s not in follow])}]")
        verdict = rng.choice(("skip", "skip", "skim", "deep-read"))
        if verdict != "skip":
            lines.append(f"    min_verdict: {verdict}")
        if rng.random() < 0.2:
            lines.append(f"    budget: {rng.choice((1, 2, 3))}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def one(n_prs: int, n_readers: int, language: str, history: str = "", until: str = "2026-05-31",
        trace: bool = False) -> dict:
    """One size, measured in this (fresh) process. ``trace``: the Python heap traced too (tracemalloc: slower,
    its figures beside each step's) and what grew during delivery told on stderr."""
    from flows.media import default_media
    from prdigest.deliver.media import MediaRegistry, Medium
    from prdigest.kernel.config import load_settings
    from prdigest.kernel.options import RunOptions
    from prdigest.pipeline.compose import build_services
    from prdigest.pipeline.edition import EditionPipeline
    from renderers.site import build_site

    calls: dict[str, int] = {}

    def counted(medium: Medium) -> Medium:
        def render(*args):
            calls[medium.name] = calls.get(medium.name, 0) + 1
            return medium.render(*args)
        return replace(medium, render=render)

    steps: dict[str, float] = {}
    # (step, peak RSS so far, RSS now) in MiB at each step's end; with --trace, the traced heap now and its peak too
    phases: list[tuple[Any, ...]] = []  # a str, then floats
    snapshots: dict[str, object] = {}

    def mark(step: str) -> None:
        rss = (peak_rss(), current_rss())
        traced: tuple[float, ...] = ()
        if trace and tracemalloc.is_tracing():  # the Python heap now and its peak during the step, MiB
            now, peak = tracemalloc.get_traced_memory()
            tracemalloc.reset_peak()
            traced = (now / 2**20, peak / 2**20)
            if step in TRACED:
                snapshots[step] = tracemalloc.take_snapshot()
        phases.append((step, *rss, *traced))

    class Timed(EditionPipeline):
        def render(self, *args, **kwargs):
            started = time.perf_counter()
            try:
                return super().render(*args, **kwargs)
            finally:
                steps["render"] = steps.get("render", 0.0) + time.perf_counter() - started
                mark("render")

        def deliver(self, *args, **kwargs):
            started = time.perf_counter()
            tenth = [0]

            def sampled(done: int, total: int) -> None:  # the peak at each tenth of the messages
                if total and done * 10 >= (tenth[0] + 1) * total:
                    tenth[0] = done * 10 // total
                    mark(f"deliver {tenth[0] * 10}%")
            try:
                return super().deliver(*args, progress=sampled, **kwargs)
            finally:
                steps["deliver"] = steps.get("deliver", 0.0) + time.perf_counter() - started
                mark("deliver")

        def save(self, edition, status, **kwargs):
            try:
                return super().save(edition, status, **kwargs)
            finally:
                mark(f"save {status}")

    def marked(name: str):
        def method(self, *args, **kwargs):
            try:
                return getattr(EditionPipeline, name)(self, *args, **kwargs)
            finally:
                mark(name)
        return method

    for name in ("collect", "draft", "connect", "review", "publish", "write_view"):
        setattr(Timed, name, marked(name))

    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        if history:
            from benchmarks.real_week import history_records
            from prdigest.classify.subsystems import FolderClassifier

            records = history_records(Path(history), n_prs, until)
            (tmp_path / "prs.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records),
                                                encoding="utf-8")
            folders: dict[str, int] = {}
            for r in records:
                for f in r["files"]:
                    folder = FolderClassifier.folder_of(f["path"])
                    folders[folder] = folders.get(folder, 0) + 1
            from benchmarks.real_week import repo_of
            from prdigest.classify.proposal.propose import propose
            from prdigest.classify.proposal.repo import from_prs
            from prdigest.classify.subsystems import classifier_for
            from prdigest.kernel.models import PullRequest

            # the repo's vocabulary as the run will have it: its rules, else the subsystems proposed from these
            # PRs on its first run (what `digest run` keeps), else its busiest folders
            repo = repo_of(Path(history))
            known = classifier_for(repo).known_subsystems or set(propose(from_prs(
                repo, [PullRequest.model_validate(r) for r in records])).names)
            subsystems = sorted(known) if known else sorted(folders, key=lambda k: -folders[k])[:12]
        else:
            records = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]
            subsystems = sorted({s for r in records for s in r["gold"]["subsystems"]})
            write_prs(tmp_path / "prs.jsonl", n_prs)
        write_readers(tmp_path / "readers.yaml", n_readers, subsystems)
        # The real PRs span a few weeks: the edition's window is all of them (a JSONL of several weeks needs one).
        window = {}
        if history:
            merged = sorted(r["merged_at"][:10] for r in records)
            last = (datetime.fromisoformat(merged[-1]) + timedelta(days=1)).date().isoformat()
            window = {"since": merged[0], "until": last}
        options = RunOptions(source=f"jsonl:{tmp_path / 'prs.jsonl'}", readers=str(tmp_path / "readers.yaml"),
                             out=str(tmp_path / "out"), language=language, state=str(tmp_path / "state.sqlite"),
                             **window)
        settings = load_settings(**options.settings_overrides())
        media = MediaRegistry([counted(m) for m in default_media(options.deliver)])
        if trace:
            tracemalloc.start(8)
        mark("start")
        started = time.perf_counter()
        summary = Timed(build_services(options, settings, media, site=build_site)).run()
        total = time.perf_counter() - started
        if trace:
            for before, after in zip(TRACED, TRACED[1:]):
                if before in snapshots and after in snapshots:
                    print(f"--- held at the end of '{after}' more than at the end of '{before}':", file=sys.stderr)
                    grown = snapshots[after].compare_to(snapshots[before], "traceback")  # type: ignore[attr-defined]
                    for stat in grown[:8]:
                        print(f"{stat.size_diff / 1024:+.0f} KiB in {stat.count_diff:+d} blocks, allocated at:",
                              file=sys.stderr)
                        print("\n".join(stat.traceback.format()[-8:]), file=sys.stderr)
            snapshots.clear()
            tracemalloc.stop()
        cpu_s = (lambda u: u.ru_utime + u.ru_stime)(resource.getrusage(resource.RUSAGE_SELF))
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        outbox = sum(1 for _ in (tmp_path / "out" / "outbox").iterdir())
        # after the run's figures: the messages' sizes and parts (read back with the email package)
        sizes = messages(tmp_path / "out" / "outbox") if history else {}
    return {
        "prs": n_prs, "readers": n_readers, "language": language, "variants": len(summary.variants),
        "idle": len(summary.idle_readers), "published": summary.published, "renders": calls,
        "sent": len(summary.sent), "outbox_files": outbox, "failed": len(summary.failed),
        "render_s": steps.get("render", 0.0), "deliver_s": steps.get("deliver", 0.0), "total_s": total,
        "cpu_s": cpu_s, "rss_peak_mib": rss, "load": os.getloadavg(), "phases": phases, **sizes,
    }


#: The steps whose ends --trace compares (what each holds more than the one before).
TRACED = ("start", "collect", "draft", "connect", "review", "render", "save approved", "publish", "write_view",
          "deliver 10%", "deliver 100%", "deliver")


def peak_rss() -> float:
    """The process's peak resident memory so far, MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def current_rss() -> float:
    """The process's resident memory now, MiB (Linux's /proc; NaN elsewhere)."""
    try:
        return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return float("nan")


def where_peak(result: dict) -> str:
    """The step during which the peak RSS was reached, and the peak at each step's end (one line)."""
    phases = result.get("phases") or []
    rising = [(step, peak) for (step, peak, _), (_, before, _) in zip(phases[1:], phases) if peak > before + 0.5]
    top = max(phases, key=lambda p: p[1], default=None)
    first = next((step for step, peak, _ in phases if top is not None and peak >= top[1]), "?")
    steps = ", ".join(f"{step} {peak:.0f}/{now:.0f}" for step, peak, now in phases)
    return (f"{result['readers']:,} readers: peak reached in '{first}'; rises: "
            + ", ".join(f"{s} → {p:.0f}" for s, p in rising) + f" (peak/now MiB at each step's end: {steps})")


def messages(outbox: Path) -> dict:
    """The e-mails' largest size, and how many have a text part longer than their HTML part."""
    from email import policy
    from email.parser import BytesParser

    largest, text_over_html, count = 0, 0, 0
    for path in outbox.glob("*.eml"):
        data = path.read_bytes()
        count += 1
        largest = max(largest, len(data))
        message = BytesParser(policy=policy.default).parsebytes(data)
        text, html = message.get_body(("plain",)), message.get_body(("html",))
        if text is not None and html is not None and len(text.get_content()) > len(html.get_content()):
            text_over_html += 1
    return {"emails": count, "largest_email_kb": largest / 1024, "text_over_html": text_over_html}


#: What the code before each change measured, and what changed (kept in the section by --write).
HISTORY = (
    "Before (issue 30's finding), the same script and inputs on the code before the first change (commit 0da6016, "
    "the script copied into a checkout of it): every variant rendered on every medium, and every variant's "
    "renderings held until delivery. 1,000 readers: 843 variants, renders 843 / 843 / 843, render 49.5 s, deliver "
    "17.5 s, whole run 69.6 s, peak RSS 828 MiB (load 2.7, 1.5, 0.7); measured again at load ~10: 68.7 CPU s, 827 MiB. "
    "10,000 readers: 5,767 variants, renders 5,767 / 5,767 / 5,767, render 917.4 s, deliver 338.2 s, whole run "
    "1,271.6 s, **peak RSS 5,346 MiB** (load 7.6, 6.9, 5.1; its CPU time was not recorded).\n\n"
    "First change (session 4): a variant is rendered only on the media its readers use (10,000 readers: 7,653 "
    "renders instead of 17,301); an entry's view and per-medium pieces are made once per render step and shared "
    "by every variant (`renderers/shared.py`); each variant's renderings are packed (pickled, zlib) until its "
    "delivery, which claims rows variant by variant and unpacks one variant at a time; the e-mail body is "
    "encoded and flattened once per variant; wrapping is linear. Peak memory 5,346 → 400 MiB at 10,000 readers.\n\n"
    "Second change (session 5), for the time: an entry's e-mail fragment is compiled by MJML once per render step "
    "and a variant's document is compiled around a mark per verdict group, the compiled entries put in place "
    "(byte for byte the whole compile, tested side by side), instead of compiling the whole document two to "
    "four times per variant over budget; a variant's connections, badges and headlines of story entries made once "
    "per e-mail (they were made per compile attempt, for every entry); the Slack and Feishu files' indented JSON "
    "written by orjson (`prdigest/kernel/jsontext.py`, ~7× the standard library's pure-Python indented encoder, the "
    "same bytes); e-mail header values parsed and folded once for the messages that share them, and a body's "
    "line breaks rewritten in one call; the outbox's claimed rows begin in one commit, are written, and are "
    "recorded in one commit (3 commits per up to 8 rows instead of 1 + 2 per file; a deliverer stopped mid-batch "
    "leaves its begun rows `uncertain`, never `sent` unwritten), with the readers of consecutive small variants "
    "claimed together; SQLite's claim updates its rows by rowid (it scanned every pending row of the edition per "
    "claim: 4 ms a claim at 10,000 readers); variant planning reads each entry's fields once per plan, not once "
    "per filter. Every medium's output is byte-identical to the code before (the rendered files and the outbox's, "
    "boundaries, dates and Message-IDs aside, compared over a 400-reader run). Before → after (the code before, "
    "commit a4c77c1, run by this script on this machine the same day): 1,000 readers 37.2 → 22.9 CPU s, whole run "
    "37.5 → 21.4 s (before: load 2.4, 2.4, 1.5); 10,000 readers 259.5 → 155.5 CPU s, whole run 387.6 → 164.9 s "
    "(before: load 2.9, 2.4, 1.2, beside a profiled run on the other core).\n\n"
    "Third change (session 6), for the time: an e-mail's two parts are encoded by `binascii` once per variant "
    "(quoted-printable, line by line or in one call where that gives the same bytes; base64 when it is shorter, "
    "which it is for most zh-CN parts, or when a line would begin \"From \"; 7bit when nothing needs escaping) and "
    "placed with `set_payload` and an explicit Content-Transfer-Encoding, instead of the email package's content "
    "manager (its pure-Python quoted-printable encoder); every message has the same boundary (`=_` and random hex, "
    "which no encoded line can hold), so the generator no longer searches each message's body for one; a reader's "
    "To, Subject and preheader are written as they are when they are plain ASCII fitting one line, else as RFC 2047 "
    "encoded-words by `email.header.Header`, and the other short ASCII values (Date, a short Message-ID) are stored "
    "unparsed (the email package parsed and folded each reader's); a header class's `max_count` is looked up once "
    "per name (the registry made a class per lookup, per header set). A variant's MJML document with marks is "
    "compiled once instead of once per attempt at its size (a note's text is marked like a group's entries, and "
    "compiled once per render step); a plan's variants' ledes read the edition's live entries once, not once per "
    "variant; each filter's selection keeps the plan's reading order instead of being sorted; an entry's plain "
    "text is joined once per render step; a variant's connections block is made once for every medium (the "
    "e-mail's HTML, its text part, Slack and Feishu made it each), and Slack's divider and group headers once per "
    "render step. The rendered files are byte-identical to before "
    "(`tests/test_golden_outputs.py`, and the whole-compile comparison in `tests/test_renderers.py`); the outbox's "
    "e-mails are not byte-identical to the email package's any more (their own transfer encodings, boundary and "
    "header encoding): tests read them back with its parser (`policy.default`) over 300 hostile texts and through "
    "the real local SMTP server: every header decodes to what was meant, both parts' content to the rendered text "
    "and HTML, and every line is ASCII, at most 998 octets and ends in CRLF. That also fixed four faults of the "
    "e-mails before: a long display name with a comma, folded by the email package, lost its quotes (one To became "
    "two addresses); a literal `=?…?=` in a subject was decoded by every reader; text parts went 8bit; and "
    "smtplib's `send_message` wrote \">From \" into a quoted-printable line that began \"From \".")
#: What the code before the third change measured (BENCHMARKS.md's Scale section of commit cfb48d1, the same day).
BEFORE = {1000: {"cpu_s": 22.9, "total_s": 21.4, "load": "1.1, 0.5, 1.0", "note": ""},
          10000: {"cpu_s": 155.5, "total_s": 164.9, "load": "2.1, 1.3, 1.2", "note": ", beside a CI run"}}


def comparison(results: list[dict]) -> str:
    """Before and after the third change, in the terms of the table, and whether the target is met."""
    parts = []
    for r in results:
        b = BEFORE.get(r["readers"])
        if b is not None:
            parts.append(f"{r['readers']:,} readers: {b['cpu_s']:.1f} → **{r['cpu_s']:.1f} CPU s**, whole run "
                         f"{b['total_s']:.1f} → {r['total_s']:.1f} s (before: load {b['load']}{b['note']})")
    text = ("Third change, before → after (the code before, commit cfb48d1, measured by this script on this machine "
            "the same day, 15:36 UTC): " + "; ".join(parts) + "." if parts else "")
    big = [r for r in results if r["readers"] >= 10000]
    if big:
        r = big[-1]
        if r["total_s"] <= 120 and r["cpu_s"] <= 120:
            text += (f"\n\nThe target (300 PRs × 10,000 readers in ≤ 120 s and ≤ 2 GiB on 2 cores) is met: "
                     f"{r['total_s']:.0f} s, {r['cpu_s']:.0f} CPU s, {r['rss_peak_mib']:,.0f} MiB.")
        else:
            text += (f"\n\n**The 120 s target is not met**: 10,000 readers took {r['cpu_s']:.0f} CPU seconds "
                     f"({r['total_s']:.0f} s of wall time at the load shown) in one process; memory is well inside "
                     f"2 GiB ({r['rss_peak_mib']:,.0f} MiB).")
        text += " " + WHERE
    return text


#: Where the time of the 10,000-reader run goes (a cProfile of it during the third change; shares, not seconds).
WHERE = (
    "Where it goes now (a profile of the 10,000-reader run): rendering is about half the run, most of it the "
    "e-mail (per variant its document with marks rendered by Jinja and compiled by MJML once, or twice when a "
    "full attempt comes before the compact ones, its entries' compiled HTML put in place, the plain-text part), "
    "then Slack's blocks, writing the rendered files and packing each variant's renderings (pickle, zlib); "
    "delivering is about two fifths: the e-mail's two parts encoded once per variant (base64 for most zh-CN parts, "
    "~0.5 ms per 90 KB), each message's headers and flattening, writing 11,747 files (a temporary file, its "
    "write, the rename: about a third of delivery), unpacking each variant's renderings, and the ledger's "
    "commits; the rest is collect, draft, connect (the variant plans and ledes, now a few seconds), publish, the "
    "benchmark's own setup and clean-up, and compiling the sources at import (this machine's environment sets "
    "PYTHONDONTWRITEBYTECODE, ~1–2 s a process). Next, if it is wanted: one variant plan instead of two (the "
    "connect step plans over the drafts, the render step over the approved entries: the same when nothing is "
    "rejected), and each message's bytes assembled from the variant's flattened body and its own headers without "
    "the generator.")


def section(results: list[dict], before: str) -> str:
    """The Scale section of BENCHMARKS.md for these results."""
    lines = [
        "Command: `.venv/bin/python -m benchmarks.scale --write` (each size in a fresh process; `digest run`'s "
        "pipeline with the offline drafter, auto approval, `--deliver outbox`, SQLite state; PRs from the sample "
        "week copied with new numbers; readers with random filters: one to three subsystems or all, an exclusion "
        f"for 30 %, a lowest verdict, a smaller read-first budget for 20 %; {SLACK_ONLY:.0%} Slack only, "
        f"{BOTH:.0%} e-mail and Slack, {FEISHU:.0%} e-mail and Feishu, the rest e-mail only). \"load\" is the "
        "machine's load average (1, 5, 15 min) at the end of each size: other sessions share the 2 cores, so the "
        "wall times (render, deliver, whole run) follow the load; \"CPU s\" is the run's own processor time "
        "(user + system), which does not.",
        "",
        "| PRs | readers | variants | renders (email / slack / feishu) | render s | deliver s | whole run s "
        "| CPU s | outbox files | peak RSS MiB | load |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        renders = " / ".join(str(r["renders"].get(m, 0)) for m in ("email", "slack", "feishu"))
        load = ", ".join(f"{x:.1f}" for x in r["load"])
        lines.append(f"| {r['prs']} | {r['readers']:,} | {r['variants']:,} | {renders} | {r['render_s']:.1f} "
                     f"| {r['deliver_s']:.1f} | {r['total_s']:.1f} | {r.get('cpu_s', float('nan')):.1f} "
                     f"| {r['outbox_files']:,} "
                     f"| {r['rss_peak_mib']:,.0f} | {load} |")
    lines += ["", HISTORY]
    compared = comparison(results)
    if compared:
        lines += ["", compared]
    if before:
        lines += ["", before]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prs", type=int, default=300)
    parser.add_argument("--readers", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--language", default="zh-CN")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--trace", action="store_true", help="with --one: trace the Python heap (slower)")
    parser.add_argument("--before", default="", help="a further paragraph for the section (after its history)")
    parser.add_argument("--history", default="", help="a bare git repository whose last merged PRs are the week")
    parser.add_argument("--until", default="2026-05-31", help="with --history: the history up to this date")
    parser.add_argument("--write", action="store_true", help="replace the Scale section of BENCHMARKS.md")
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.prs, args.one, args.language, args.history, args.until, args.trace)))
        return
    results = []
    for n in args.readers:
        extra = ["--history", args.history, "--until", args.until] if args.history else []
        child = subprocess.run([sys.executable, "-m", "benchmarks.scale", "--one", str(n), "--prs", str(args.prs),
                                "--language", args.language, *extra], cwd=ROOT, capture_output=True, text=True)
        if child.returncode:
            raise SystemExit(f"{n} readers failed:\n{child.stderr[-3000:]}")
        result = json.loads(child.stdout.strip().splitlines()[-1])
        print(json.dumps(result))
        print(where_peak(result), file=sys.stderr)
        results.append(result)
    if args.write and args.history:
        write_section("Scale: real PRs", real_section(results, args))
    elif args.write:
        write_section("Scale", section(results, args.before))


#: What the code before issue 38's streaming measured with this script the same evening (commit b49a490, the script
#: run from a copy of it; 10,000 readers and 1,000 PRs right after the runs of the code after): (PRs, readers) →
#: CPU s, peak RSS MiB, load.
BEFORE_REAL = {(300, 1000): (10.5, 122, "4.1, 2.2, 1.5"), (300, 10000): (64.0, 273, "6.5, 6.0, 5.8"),
               (1000, 10): (12.3, 120, "6.3, 6.0, 5.8")}

#: What changed for issue 38 (render and deliver as a stream), and where the memory of 10,000 readers still goes.
STREAM = (
    "Issue 38, render and deliver as a stream: each variant's renderings are written once, packed, to a spool (an "
    "unnamed file beside the outputs: `prdigest/deliver/spool.py`) and read back one variant at a time by delivery, "
    "instead of every variant's packed renderings held in memory from the render step to delivery; an e-mail over "
    "its size budget is laid out once (the layouts' sizes told from their compiled pieces, only the chosen one put "
    "together: 1 attempt where a compact variant took 2 to 7); a record save reads the stored record's status, not "
    "its whole content; the end-of-run summary counts messages per variant once. (At that round memory was not flat "
    "in readers: the readers file read and the record's variants parsed at each load/save; see the third round "
    "above.) The CPU seconds of this section were measured at load 3 to 10 (other sessions on the 2 cores) and moved "
    "by ±2 s between runs of the same code at 1,000 readers (before: 11.3, 11.8; after: 12.9, 13.6, 10.0 in "
    "alternating runs): compare them at low load before reading a change into them.")


def kept_rows(results: list[dict], path: Path | None = None) -> list[str]:
    """The table rows of the "Scale: real PRs" section for sizes this run did not measure (another --prs)."""
    from benchmarks.report import BENCHMARKS

    text = (path or BENCHMARKS).read_text(encoding="utf-8") if (path or BENCHMARKS).exists() else ""
    start = text.find("## Scale: real PRs\n")
    if start < 0:
        return []
    end = text.find("\n## ", start + 1)
    measured = {(r["prs"], r["readers"]) for r in results}
    rows = []
    for line in text[start:end if end >= 0 else None].splitlines():
        cells = [c.strip().replace(",", "") for c in line.strip("|").split("|")]
        if line.startswith("| ") and len(cells) > 2 and cells[0].isdigit() and cells[1].isdigit() \
                and (int(cells[0]), int(cells[1])) not in measured:
            rows.append(line)
    return rows


def real_section(results: list[dict], args: argparse.Namespace) -> str:
    """The "Scale: real PRs" section: the same run over a real repository's last merged PRs; rows of other sizes
    (another --prs) kept from the section as it was."""
    from benchmarks.real_week import repo_of

    repo = repo_of(Path(args.history))
    command = (f".venv/bin/python -m benchmarks.scale --prs {args.prs} --readers "
               f"{' '.join(str(n) for n in args.readers)} --history {args.history} --until {args.until} --write")
    lines = [
        f"Command: `{command}` (rows of other sizes: the same command with their `--prs` and `--readers`). The PRs "
        f"are {repo}'s last merged before {args.until} "
        "(`benchmarks/real_week.py`: real titles, messages, authors, files and line counts from the first-parent "
        "history; no review comments), not the sample week copied; readers as in the Scale section, following the "
        "repo's own subsystems (no rules file: those `digest run` proposes from these PRs and keeps). Targets: ≤ 60 CPU s "
        "and ≤ 512 MiB at 300 PRs × 10,000 readers, memory flat in readers; ≤ 15 CPU s at 1,000 PRs × 10 readers.",
        "",
        "| PRs | readers | variants | renders (email / slack / feishu) | render s | deliver s | whole run s "
        "| CPU s | outbox files | peak RSS MiB | largest e-mail KB | text part > HTML part | load |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    rows = []
    for r in results:
        renders = " / ".join(str(r["renders"].get(m, 0)) for m in ("email", "slack", "feishu"))
        load = ", ".join(f"{x:.1f}" for x in r["load"])
        rows.append(((r["prs"], r["readers"]), f"| {r['prs']} | {r['readers']:,} | {r['variants']:,} | {renders} "
                     f"| {r['render_s']:.1f} | {r['deliver_s']:.1f} | {r['total_s']:.1f} | {r['cpu_s']:.1f} "
                     f"| {r['outbox_files']:,} | {r['rss_peak_mib']:,.0f} | {r['largest_email_kb']:,.0f} "
                     f"| {r['text_over_html']:,} of {r['emails']:,} | {load} |"))
    for line in kept_rows(results):
        cells = [c.strip().replace(",", "") for c in line.strip("|").split("|")]
        rows.append(((int(cells[0]), int(cells[1])), line))
    lines += [line for _, line in sorted(rows)]
    compared = []
    for (prs, readers), line in sorted(rows):
        before = BEFORE_REAL.get((prs, readers))
        cells = [c.strip() for c in line.strip("|").split("|")]
        if before is not None:  # the row's CPU s, peak RSS and load
            compared.append(f"{prs} PRs × {readers:,} readers: {before[0]:.1f} → {cells[7]} CPU s, peak "
                            f"{before[1]} → {cells[9]} MiB (after: load {cells[12]}; before: load {before[2]})")
    if compared:
        lines += ["", "Before → after issue 38's streaming (the code before, commit b49a490, measured by this script "
                      "the same evening; CPU seconds grow with the machine's load): " + "; ".join(compared) + "."]
    lines += ["", eighth_round(results), "", SEVENTH_ROUND, "", SIXTH_ROUND, "", FIFTH_ROUND, "", FOURTH_ROUND, "",
              THIRD_ROUND, "", STREAM]
    return "\n".join(lines)


#: What the third round changed (kept in the section by --write).
THIRD_ROUND = (
    "Issue 38, memory flat in readers (third round): the edition record's variants are kept in rows of their own "
    "(`edition_variants`; the record's row keeps the rest and each variant's hash under the seal; a save writes only "
    "the variant rows that changed; `digest resend` reads only the variants of the rows it sends, `digest status` "
    "none; an old record reads and moves to rows at its next save); the readers file is read one reader at a time "
    "(the 10,000-reader file's traced peak 64 → 18 MiB) and equal filters are held once across readers (held 15.5 → "
    "7.7 MiB); the variant plan is made once (the connect step's grouping by filter is reused at render); "
    "`digest.json` is written variant by variant; the e-mail package's header classes are made once. After it, "
    "1,000 → 10,000 readers grew the peak by 66 % (104 → 172 MiB).")


#: What issue 38's fourth round changed and measured (its paragraph as that round's --write made it).
FOURTH_ROUND = (
    'Issue 38, memory flat in readers (fourth round, measured per step: `where_peak` prints the peak RSS at each '
    "step's end and at each tenth of delivery): delivery no longer reads the edition's ledger rows as objects (the "
    "claims are planned from the pending rows' keys, the report reads the rows it did not try a page at a time: "
    "the first read of every row, ~1.5 KB of objects a row, was held to the run's end), registers its rows 1,000 "
    'at a time from rows made as they are read, and keeps its results and deliveries in slotted objects; a record '
    'save serialises, hashes and writes one variant at a time (the whole-edition hash fed as it goes, the same '
    "hash); the render step's last act, pruning the output folder, looks at its ~7,300 files one at a time (traced "
    "8.1 → 1.3 MiB). Messages were already composed one at a time (the outbox's claimed rows in batches of 8) and "
    "each variant's renderings read back from the spool one variant at a time. A fixed glibc mmap threshold "
    '(`MALLOC_MMAP_THRESHOLD_=131072`: large buffers always returned to the system) moved the 10,000-reader peak '
    'by 2 MiB only (143 → 141, two runs side by side before the pruning change): fragmentation of large message '
    'buffers is not where the memory is, so no `malloc_trim` is called. 1,000 readers: peak 101 MiB, 9.9 CPU s '
    "(load 3.8, 4.5, 5.1); peak RSS at each step's end: imports 76, collect 79, connect 85, drafted record's save "
    "88, render 98, publish 98, delivery's end 101; before: 13.1 CPU s, 104 MiB (load 5.0, 2.3, 1.5), the peak in "
    "delivery (render 98, delivery's end 104); 10,000 readers: peak 143 MiB, 45.8 CPU s (load 2.9, 4.0, 4.9); peak "
    "RSS at each step's end: imports 77, collect 86, connect 104, drafted record's save 107, render 135, publish "
    "135, delivery's end 143; before: 54.2 CPU s, 172 MiB (load 4.3, 3.7, 2.3), the peak in delivery (render 134, "
    "publish 136, the first tenth of delivery 156, delivery's end 171). 1,000 → 10,000 readers grew the peak by 41 "
    '% (101 → 143 MiB; 66 % before this round; the ≲ 25 % aim still missed), at 46 CPU s (target ≤ 60) and well '
    'inside 512 MiB. What grows with readers now is before delivery: the readers file read (collect), the variant '
    'plans and ledes of 3,088 variants (connect), and the render step (traced with `--one 2000 --trace`: the '
    'Python heap holds 13.5 MiB before the render step, peaks at 28 during it and holds 16.5 after, so most of the '
    "render step's rise in RSS is transient work over thousands of variants, not what it keeps); those steps were "
    'not changed in this round.')


#: What issue 38's fifth round changed and measured (its paragraph as that round's --write made it).
FIFTH_ROUND = (
    "Issue 38, memory flat in readers (fifth round: render and connect): the render step's shared scratch kept "
    "each variant's connections (its lede, read-first, stories and follow-ups, cleaned and capped: new strings "
    'per variant) until the step ended, one per variant (3,088 variants at 10,000 readers); they are reused only '
    "by the variant's own media, rendered one after another, so only the newest is kept (`renderers/shared.py`'s "
    "`latest`; the renderings' bytes unchanged, tested against each variant rendered alone): traced with `--one "
    "2000 --trace` (load ~3.5), the Python heap's peak during the render step 28 → 23 MiB, held after it 16.5 → "
    "15.5 MiB. The connect step's plan, kept for the render step, holds each filter's selection as a bit mask "
    "over the plan's reading order instead of a tuple of the selected numbers (8 bytes an entry, ~60 entries a "
    "filter), its groups slotted, and the filters kept share equal sets of subsystems (the test's 1,096 filters: "
    "1,466 → 598 bytes each); the render step's variants with equal selections share one list of entries (held to "
    "the run's end). 1,000 readers: peak 101 MiB, 10.5 CPU s (load 1.4, 2.0, 2.7); peak RSS at each step's end: "
    "imports 76, collect 79, connect 85, drafted record's save 87, render 95, publish 97, delivery's end 101; "
    "before: 9.9 CPU s, 101 MiB (load 3.8, 4.5, 5.1; imports, collect, connect, drafted save, render, delivery's "
    'end: 76, 79, 85, 88, 98, 101); 10,000 readers: peak 138 MiB, 39.7 CPU s (load 1.6, 1.9, 2.6); peak RSS at '
    "each step's end: imports 77, collect 86, connect 101, drafted record's save 105, render 117, publish 126, "
    "delivery's end 138; before: 45.8 CPU s, 143 MiB (load 2.9, 4.0, 4.9; imports, collect, connect, drafted "
    "save, render, delivery's end: 77, 86, 104, 107, 135, 143). **1,000 → 10,000 readers now grows the peak by 37 "
    '%** (101 → 138 MiB; 41 % before this round; the ≲ 25 % aim still missed), at 40 CPU s (target ≤ 60) and well '
    "inside 512 MiB. The render step's end is lower, but the peak is set later: the approved record's save after "
    "render and delivery's transient work rise back into the room render freed (RSS is a high-water mark; traced "
    "at 2,000 readers, delivery's heap grows from 15 to 26 MiB over its messages, partly the e-mail package's "
    "parsed headers, not changed in this round). CPU seconds move with other sessions' load on this machine (see "
    "the streaming paragraph below): compare them at like load. The 1000 × 10 row is the third round's, not "
    'measured again.')


#: What issue 38's sixth round changed and measured (its paragraph as that round's --write made it).
SIXTH_ROUND = (
    "Issue 38, memory flat in readers (sixth round: after render). Delivery: a reader's own Message-ID (too long to "
    "be stored as written) was parsed into the e-mail package's shared header cache, which no other message reads, "
    'and kept alive by the folded-lines cache too: up to 1,024 parsed ids of ~7 KB each (the "parsed headers" of the '
    "fifth round's trace); now parsed for its message alone (`_OWN` in `prdigest/deliver/email_message.py`: the same "
    "bytes). A deliverer kept its results and what it tried in a dictionary and a set keyed by each claimed row's own"
    ' (reader, medium) strings beside a second index of the plan (~410 bytes a message in the test, now ~110: a list '
    "slot and a byte by the plan's place); a planned message's compose was a `functools.partial` with its own "
    'argument tuple (now slotted: ~370 → ~220 bytes a planned message); the pending rows were read into one set at '
    'the start of the run and of each pass to plan the claims (now a page at a time, `Ledger.each_key`, into a byte '
    "per planned message). The approved record's save after the render step made a new, equal record of each rendered"
    " variant (3,088 at 10,000 readers) and held both while it saved; it now keeps the reviewed record's object where"
    " the render step planned the same variant (the stored record and its hash unchanged). The render step's list of "
    "the files it wrote, held to the run's end, holds their paths as text instead of Path objects (~430 → ~100 bytes "
    'a file, ~7,300 files at 10,000 readers). Every rendering and outbox file is the bytes it was (the golden and '
    'rendering tests, and the delivery tests reading the e-mails back). 1,000 readers: peak 95 MiB, 10.3 CPU s (load '
    "3.0, 3.0, 5.3); peak RSS at each step's end: imports 76, collect 79, connect 85, drafted record's save 87, "
    "render 95, approved record's save 95, publish 95, delivery's first tenth 95, delivery's end 95; before (the "
    "fifth round's row): 10.5 CPU s, 101 MiB (load 1.4, 2.0, 2.7; at the same steps' ends: 76, 79, 85, 87, 95, -, 97,"
    " -, 101); the code before run again today: 14.0 CPU s, 101 MiB (load 6.6, 3.7, 2.1; at the same steps' ends: 76,"
    ' 80, 85, 87, 95, 97, 97, 97, 101); 10,000 readers: peak 124 MiB, 39.6 CPU s (load 2.2, 2.8, 5.1); peak RSS at '
    "each step's end: imports 77, collect 86, connect 101, drafted record's save 105, render 116, approved record's "
    "save 116, publish 119, delivery's first tenth 123, delivery's end 124; before (the fifth round's row): 39.7 CPU "
    "s, 138 MiB (load 1.6, 1.9, 2.6; at the same steps' ends: 77, 86, 101, 105, 117, -, 126, -, 138); the code before"
    " run again today: 66.4 CPU s, 139 MiB (load 8.8, 7.4, 4.4; at the same steps' ends: 77, 86, 101, 105, 117, 124, "
    '126, 133, 139). **1,000 → 10,000 readers now grows the peak by 31 %** (95 → 124 MiB; 37 % before this round; the'
    ' ≲ 25 % aim still missed), at 40 CPU s (target ≤ 60) and well inside 512 MiB. Two earlier runs of the same code '
    'with this command, 1,000 / 10,000 readers: 95 / 124 MiB, 9.9 / 36.0 CPU s (load 3.8 / 3.0); 96 / 124 MiB, 8.6 / '
    '37.0 CPU s (load 0.7 / 2.6). Delivery no longer grows over its messages; what still grows with readers (the '
    "steps' ends above, 10,000 against 1,000): collect (the readers file read), connect (3,088 variant plans, ledes "
    "and records, held to the run's end), render, publish (~2 MiB, not traced) and the start of delivery (its plan: a"
    ' Delivery, its compose and Message-ID per message, ~220 bytes each for 11,549 messages, and the index of their '
    "places). Collect, connect and render were not changed in this round. CPU seconds move with other sessions' load "
    "on this machine (load 1 to 11 during this round's runs): compare them at like load. The 1000 × 10 row is the "
    "third round's, not measured again.")


#: What issue 38's seventh round changed and measured (its paragraph as that round's --write made it).
SEVENTH_ROUND = (
    "Issue 38, memory flat in readers (seventh round: the variant records). The connect step's variant records "
    "(one per variant, 3,088 at 10,000 readers, held to the run's end, and the stored ones the approved save "
    "keeps) each held a set of the fields given, made anew by pydantic per record and per its filter's record "
    '(728 bytes each for five or six names): every record is made with every field given, so they now share their '
    "class's one set (`prdigest/state/fields_set.py`; pydantic only adds an assigned field's name to it, and "
    'every name is in it already): ~2,450 → ~1,000 bytes a record beside its lists in the test. Records compare '
    'and serialise as before (the stored record and its hash unchanged). 1,000 readers: peak 95 MiB, 9.4 CPU s '
    "(load 5.5, 6.3, 6.2); peak RSS at each step's end: imports 76, collect 79, connect 85, drafted record's save "
    "87, render 94, approved record's save 95, publish 95, delivery's first tenth 95, delivery's end 95; before "
    "(the sixth round's row): 10.3 CPU s, 95 MiB (load 3.0; at the same steps' ends: 76, 79, 85, 87, 95, 95, 95, "
    "95, 95); 10,000 readers: peak 120 MiB, 35.1 CPU s (load 5.1, 6.0, 6.1); peak RSS at each step's end: imports "
    "78, collect 86, connect 97, drafted record's save 101, render 111, approved record's save 111, publish 114, "
    "delivery's first tenth 118, delivery's end 120; before (the sixth round's row): 39.6 CPU s, 124 MiB (load "
    "2.2; at the same steps' ends: 77, 86, 101, 105, 116, 116, 119, 123, 124). **1,000 → 10,000 readers now grows "
    'the peak by 27 %** (95 → 120 MiB; 31 % before this round; the ≲ 25 % aim still missed), at 35 CPU s (target '
    '≤ 60) and well inside 512 MiB. What still grows with readers and was not changed in this round: the readers '
    "themselves (a Reader model and its strings, ~750 bytes each at collect), the connect plan's groups and "
    "ledes, the render step (the interpreter's table of interned strings doubles once, ~1.9 MiB, as pathlib "
    "interns each written file's name parts), publish and the start of delivery (its plan). CPU seconds move with "
    "other sessions' load on this machine: compare them at like load.")


#: What the code before issue 38's eighth round measured with this script: the seventh round's written rows (commit
#: 2a67080), and that code run again this morning (10:13 UTC, load rising with other sessions): readers → (CPU s,
#: peak RSS MiB, load, the peak RSS at the end of imports, collect, connect, the drafted record's save, render, the
#: approved record's save, publish, the first tenth of delivery and delivery's end).
BEFORE_ROUND8 = {1000: (9.4, 95, "5.5", "76, 79, 85, 87, 94, 95, 95, 95, 95"),
                 10000: (35.1, 120, "5.1", "78, 86, 97, 101, 111, 111, 114, 118, 120")}
AGAIN_ROUND8 = {1000: (9.8, 95, "5.3", "77, 80, 85, 87, 95, 95, 95, 95, 95"),
                10000: (43.7, 120, "9.4", "78, 86, 97, 101, 111, 111, 114, 118, 120")}

#: Other runs of this round's code with this command the same morning (their --write rewritten by the one above).
EARLIER_ROUND8 = (
    "Two other runs with this command, 1,000 / 10,000 readers: of the code of this round (10:53 UTC) 95 / 112 MiB, "
    "9.0 / 32.8 CPU s (load 5.7 / 5.2); of the code before its last change (the render step's variants holding the "
    "plan's lists of readers; 10:45 UTC) 94 / 112 MiB, 9.8 / 42.7 CPU s (load 7.9 / 6.2).")

#: The steps eighth_round names, and the phase each is read from.
_STEPS8 = (("imports", "start"), ("collect", "collect"), ("connect", "connect"), ("drafted record's save",
           "save drafted"), ("render", "render"), ("approved record's save", "save approved"), ("publish", "publish"),
           ("delivery's first tenth", "deliver 10%"), ("delivery's end", "deliver"))


def eighth_round(results: list[dict]) -> str:
    """What issue 38's eighth round changed, where each size's peak is now, and the growth from 1,000 to 10,000."""
    by = {r["readers"]: r for r in results if r["prs"] == 300}
    parts = [] if by else ["(the figures: a run of this command with --prs 300)"]
    for n in sorted(by):
        r = by[n]
        steps = {step: peak for step, peak, *_ in r.get("phases") or []}
        where = ", ".join(f"{name} {steps[step]:.0f}" for name, step in _STEPS8 if step in steps)
        said = f"{n:,} readers: peak {r['rss_peak_mib']:.0f} MiB, {r['cpu_s']:.1f} CPU s (load " + ", ".join(
            f"{x:.1f}" for x in r["load"]) + f"); peak RSS at each step's end: {where}"
        b, again = BEFORE_ROUND8.get(n), AGAIN_ROUND8.get(n)
        if b is not None and again is not None:
            said += (f"; before (the seventh round's row): {b[0]:.1f} CPU s, {b[1]} MiB (load {b[2]}; at the same "
                     f"steps' ends: {b[3]}); the code before run again today: {again[0]:.1f} CPU s, {again[1]} MiB "
                     f"(load {again[2]}; {again[3]})")
        parts.append(said)
    growth = ""
    if 1000 in by and 10000 in by:
        small, big = by[1000]["rss_peak_mib"], by[10000]["rss_peak_mib"]
        cpu = by[10000]["cpu_s"]
        growth = (f" **1,000 → 10,000 readers now grows the peak by {100 * (big / small - 1):.0f} %** ({small:.0f} → "
                  f"{big:.0f} MiB; 27 % before this round; the ≲ 25 % aim "
                  f"{'met' if big <= 1.25 * small else 'still missed'}), at {cpu:.0f} CPU s (target ≤ 60"
                  f"{'' if cpu <= 60 else ': over it at this load'}) and well inside 512 MiB.")
    return (
        "Issue 38, memory flat in readers (eighth round: the last growth, measured with `--one 3000 --trace` first). "
        "Readers: each reader's eleven fields were in a dictionary of its own (a table of 32 slots, ~460 bytes); they "
        "are now in dictionaries sharing one table of keys, as the interpreter keeps instance attributes "
        "(`prdigest/state/compact.py`; the test's readers 733 → 445 bytes each; they read, compare, copy and dump as "
        "before). Connect: the variant records and their filters' hold their fields the same way (~1,000 → ~810 bytes "
        "a record beside its lists), equal ledes are one string (the test's 257 variants wrote 105 distinct ledes), "
        "and the render step's variants hold the plan's lists of readers instead of copies. Render: the run's files "
        "(renderings, outbox messages, the pruning's look at the output folder) are named by path text, not Path: "
        "pathlib interns every part of every path it parses (16 names a rendered file, 12 an outbox message in the "
        "tests), and that churn over ~19,000 files doubled the interpreter's table of interned strings once (the "
        "trace's single block of +1.9 MiB in the render step at 3,000 readers). Delivery: a planned message no "
        "longer holds its Message-ID (made when the ledger registers the row, which keeps the first it saw as before, "
        "or when composed without a ledger: ~295 → ~153 bytes a planned e-mail), the outbox's routed messages share "
        "one medium name per medium instead of a string each, and a deliverer finds a row's place by medium then "
        "reader id (`prdigest/deliver/places.py`) instead of a dictionary keyed by a tuple per message (~410 → ~280 "
        "bytes a planned message when the first is sent). Every rendering and outbox file is the bytes it was (the "
        "golden and rendering tests, the delivery tests reading the e-mails back); Message-IDs are made as before, "
        "only later. "
        + "; ".join(parts) + "." + growth + " " + EARLIER_ROUND8 + " What still grows with readers: the readers "
        "themselves (their strings "
        "and ~230 bytes of model each), the variant records and plan (3,088 at 10,000 readers, held to the run's "
        "end), each planned message's delivery and compose (~150 bytes, 11,549 messages) and each message's result "
        "and its outbox path (the run's summary lists them), and transient peaks (publish's work, not traced, and the "
        "render step's) that stack on what is held. CPU seconds move with other sessions' load on this machine: compare "
        "them at like load."
    )

if __name__ == "__main__":
    main()
