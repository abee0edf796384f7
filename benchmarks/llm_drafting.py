"""LLM drafting throughput and cost: N PRs against the local OpenAI-compatible server answering after a
fixed latency, at several concurrency limits, cold (empty draft cache) and warm (same state, re-run).

    .venv/bin/python -m benchmarks.llm_drafting [--prs 300] [--latency 0.3,1] [--concurrency 1,8,32] [--write]

The PRs are the sample week cycled to N with distinct numbers and titles (so each is its own cache key).
Everything real except the model: the openai client over HTTP, prompt rendering, packing with the
offline tokenizer, schema validation, grounding, the SQLite draft cache, the thread pool and the pacing,
at its defaults: the server states no rate limit (a team's own vLLM server), so nothing waits. The target
is a cold wall time within 1.3x of the ideal N x latency / concurrency, at each latency. ``--write``
replaces this benchmark's section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from benchmarks.report import write_section
from prdigest.classify.subsystems import classifier_for
from prdigest.draft.budget import default_counter
from prdigest.draft.concurrent import draft_entries
from prdigest.draft.llm import cost_usd
from prdigest.draft.registry import DRAFTERS, DraftingContext
from prdigest.kernel.config import Settings
from prdigest.kernel.links import pr_link
from prdigest.kernel.models import PullRequest
from prdigest.kernel.prompts import load_prompt
from prdigest.state.store import LazyStore
from tests.servers.openai_server import OpenAIServer

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "prdigest" / "collect" / "data" / "vllm-sample-week.jsonl"
MODEL = "bench-model"


class ServerProcess:
    """The local server in a child process (the model server is another process in production too, and
    this keeps its CPU off the client's GIL); call counts come from its ``/_stats`` endpoint."""

    def __init__(self, latency: float, rate_limit: str = "") -> None:
        self.latency = latency
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "tests.servers.openai_server", "--latency", str(latency), "--model", MODEL,
             *(["--rate-limit", rate_limit] if rate_limit else [])],
            cwd=ROOT, stdout=subprocess.PIPE, text=True)
        line = self._proc.stdout.readline()  # "OPENAI_BASE_URL=… OPENAI_API_KEY=… DIGEST_MODEL=…"
        values = dict(part.split("=", 1) for part in line.split())
        self.base_url, self.api_key = values["OPENAI_BASE_URL"], values["OPENAI_API_KEY"]
        self._root = self.base_url.removesuffix("/v1")

    @property
    def chat_calls(self) -> int:
        with urllib.request.urlopen(f"{self._root}/_stats") as response:
            return json.load(response)["calls"].get("/v1/chat/completions", 0)

    @property
    def throttled(self) -> int:
        with urllib.request.urlopen(f"{self._root}/_stats") as response:
            return int(json.load(response).get("throttled", 0))

    def reset_counts(self) -> None:
        urllib.request.urlopen(urllib.request.Request(f"{self._root}/_reset", data=b"{}", method="POST")).close()

    def __enter__(self) -> "ServerProcess":
        return self

    def __exit__(self, *exc: object) -> None:
        self._proc.terminate()
        self._proc.wait(timeout=10)


def synthetic_week(n: int) -> list[PullRequest]:
    """The sample week cycled to ``n`` PRs, each with its own number and title."""
    base = [PullRequest.model_validate_json(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    return [base[i % len(base)].model_copy(update={
        "number": 100_000 + i, "url": pr_link("vllm-project/vllm", 100_000 + i),
        "title": f"{base[i % len(base)].title} (#{i})"}) for i in range(n)]


def run(prs: list[PullRequest], server: OpenAIServer | ServerProcess, state: Path, concurrency: int, language: str,
        store: str = "shared") -> dict:
    """Draft every PR once; the figures of that run. ``store``: ``shared`` builds the drafter as an edition run
    does (the registry, over the run's one state store, which the ledger also writes through: full fsync);
    ``own``: the drafter opens its own connection (``synchronous=NORMAL``, as before one store per run)."""
    settings = Settings(llm_base_url=server.base_url, OPENAI_API_KEY=server.api_key, model=MODEL, state=state,
                        llm_concurrency=concurrency, llm_timeout=30)  # no llm_rpm: the default pacing
    lazy = LazyStore(state) if store == "shared" else None
    drafter = DRAFTERS["openai"].build(DraftingContext(settings, None, lazy))
    drafter.check()
    classifier = classifier_for("vllm-project/vllm")
    server.reset_counts()
    started = time.perf_counter()
    entries = draft_entries(prs, classifier.classify, drafter.draft, language,
                                         lambda done, total: None, concurrency=concurrency)
    wall = time.perf_counter() - started
    pacer = drafter.pacer
    drafter.close()
    if lazy is not None:
        lazy.close()
    tokens_in, tokens_out = sum(e.tokens_in for e in entries), sum(e.tokens_out for e in entries)
    return {
        "wall": wall, "calls": server.chat_calls, "tokens_in": tokens_in, "tokens_out": tokens_out,
        "cost": cost_usd(tokens_in, tokens_out, settings),
        "llm": sum(e.drafter == f"openai:{MODEL}" for e in entries),
        "fallback": sum(e.drafter != f"openai:{MODEL}" for e in entries),
        "flagged": sum(bool(e.grounding) for e in entries),
        "throttled": server.throttled, "waits": pacer.waits if pacer else 0,
        "waited": pacer.waited if pacer else 0.0,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prs", type=int, default=300)
    parser.add_argument("--latency", default="0.3,1", help="seconds per answer, one run per value")
    parser.add_argument("--concurrency", default="1,8,32")
    parser.add_argument("--language", default="zh-CN", choices=["zh-CN", "en"])
    parser.add_argument("--in-process", action="store_true", help="run the server in a thread of this process")
    parser.add_argument("--store", default="shared", choices=["shared", "own"],
                        help="the draft cache over the run's one store (shared, as an edition) or its own connection")
    parser.add_argument("--rate-limit", default="", help="N/SECONDS: the server states a limit of N requests "
                        "per SECONDS and answers 429 over it (its own section: LLM drafting: a stated rate limit)")
    parser.add_argument("--write", action="store_true", help="replace the section in BENCHMARKS.md")
    args = parser.parse_args(argv)
    if args.rate_limit:
        return stated_limit(args)
    levels = [int(c) for c in args.concurrency.split(",")]
    latencies = [float(x) for x in args.latency.split(",")]
    prs = synthetic_week(args.prs)

    rows, warm_rows = [], []
    load_before = os.getloadavg()[0]
    for latency in latencies:
        server_cm = (OpenAIServer(models=(MODEL,), latency=latency) if args.in_process
                     else ServerProcess(latency))
        with server_cm as server, tempfile.TemporaryDirectory() as tmp:
            for c in levels:
                state = Path(tmp) / f"state-{c}.sqlite"
                cold = run(prs, server, state, c, args.language, args.store)
                warm = run(prs, server, state, c, args.language, args.store)
                ideal = args.prs * latency / c
                rows.append((latency, c, ideal, cold))
                warm_rows.append((c, warm))
                print(f"latency {latency:.2f} s, concurrency {c:>3}: cold {cold['wall']:.2f} s (ideal {ideal:.2f} s, "
                      f"{cold['wall'] / ideal:.2f}x), {cold['calls']} calls; warm {warm['wall']:.2f} s, "
                      f"{warm['calls']} calls", flush=True)
    load_after = os.getloadavg()[0]

    n = args.prs
    system_tokens = default_counter().count(load_prompt("entry").render("system", {"language": args.language}))
    command = (f".venv/bin/python -m benchmarks.llm_drafting --prs {n} --latency {args.latency} "
               f"--concurrency {args.concurrency} --language {args.language}"
               + (" --in-process" if args.in_process else "") + f" --store {args.store}"
               + (" --write" if args.write else ""))
    where = ("over the run's one state store, as an edition drafts" if args.store == "shared"
             else "on the drafter's own connection")
    lines = [
        f"{n} PRs (the sample week cycled, distinct numbers) drafted in {args.language} against the local "
        f"OpenAI-compatible server (`tests/servers/openai_server.py`) answering every call after "
        f"{' or '.join(f'{x * 1000:.0f} ms' for x in latencies)}; the real openai client over HTTP, prompt rendering, packing with "
        f"`{default_counter().name}`, schema validation, grounding and the SQLite draft cache "
        f"({where}). "
        f"Pacing at its defaults: the server states no rate limit (as a team's own vLLM server), so no request "
        f"waits (no `DIGEST_LLM_RPM`; the former default of 600 a minute made 300 drafts at 0.3 s and 8 in flight "
        f"take 29 s). Target: cold wall time ≤ 1.3 × ideal (N × latency ÷ concurrency).",
        "",
        f"Command: `{command}`",
        "",
        "| latency (s) | concurrency | ideal (s) | cold wall (s) | cold / ideal | target met | calls cold | calls warm "
        "| warm wall (s) |",
        "| ---: | ---: | ---: | ---: | ---: | :---: | ---: | ---: | ---: |",
    ]
    for (latency, c, ideal, cold), (_, warm) in zip(rows, warm_rows):
        ratio = cold["wall"] / ideal
        lines.append(f"| {latency:g} | {c} | {ideal:.2f} | {cold['wall']:.2f} | {ratio:.2f} "
                     f"| {'yes' if ratio <= 1.3 else 'NO'} | {cold['calls']} | {warm['calls']} | {warm['wall']:.2f} |")
    _, c, _, cold = rows[-1]
    warm = warm_rows[-1][1]
    lines += [
        "",
        "Per PR (cold → warm): "
        f"{cold['calls'] / n:.2f} → {warm['calls'] / n:.2f} LLM calls, "
        f"{cold['tokens_in'] / n:.0f} → {warm['tokens_in'] / n:.0f} tokens in, "
        f"{cold['tokens_out'] / n:.0f} → {warm['tokens_out'] / n:.0f} tokens out "
        f"(the server's `usage`, counted with cl100k like a gpt-4-class model; of the tokens in, "
        f"{system_tokens} are the fixed system prompt with its examples). "
        f"Estimated cost of the cold run at the default prices (${Settings().llm_price_in}/M in, "
        f"${Settings().llm_price_out}/M out): ${cold['cost']:.4f} for {n} PRs; warm: ${warm['cost']:.4f}. "
        f"Cold: {cold['llm']} LLM drafts, {cold['fallback']} fallbacks, {cold['flagged']} flagged by grounding.",
        "",
        f"Load average {load_before:.1f} before, {load_after:.1f} after (`os.getloadavg`, 1 minute). "
        f"Machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}; the server runs "
        + ("in a thread of the client's process." if args.in_process else
           "in its own process (`python -m tests.servers.openai_server`), as a model server would."),
    ]
    body = "\n".join(lines)
    print(body)
    if args.write:
        write_section("LLM drafting", body)
    return 0


def stated_limit(args: argparse.Namespace) -> int:
    """N PRs against a server that states a rate limit: how close to the limit, and how many 429s."""
    n_limit, per = args.rate_limit.split("/")
    rate = int(n_limit) / float(per)
    prs = synthetic_week(args.prs)
    latency = float(args.latency.split(",")[0])
    rows = []
    load_before = os.getloadavg()[0]
    with ServerProcess(latency, args.rate_limit) as server, tempfile.TemporaryDirectory() as tmp:
        for c in [int(x) for x in args.concurrency.split(",")]:
            cold = run(prs, server, Path(tmp) / f"state-{c}.sqlite", c, args.language, args.store)
            ideal = max(args.prs / rate, args.prs * latency / c)
            rows.append((c, ideal, cold))
            print(f"concurrency {c}: {cold['wall']:.2f} s (ideal {ideal:.2f}), {cold['throttled']} answered 429, "
                  f"{cold['waits']} requests waited {cold['waited']:.1f} s", flush=True)
    command = (f".venv/bin/python -m benchmarks.llm_drafting --prs {args.prs} --latency {latency} --concurrency "
               f"{args.concurrency} --rate-limit {args.rate_limit}" + (" --write" if args.write else ""))
    lines = [
        f"{args.prs} PRs against the local server stating a limit of {n_limit} requests per {per} s "
        f"(`x-ratelimit-*-requests` on every answer, 429 with `retry-after-ms` over it), {latency * 1000:.0f} ms "
        "an answer; the drafter's default pacing, which follows what the endpoint states (no `DIGEST_LLM_RPM`). "
        "Ideal: the larger of N ÷ rate and N × latency ÷ concurrency.",
        "", f"Command: `{command}`", "",
        "| concurrency | ideal (s) | wall (s) | wall / ideal | answered 429 | requests that waited | seconds waited "
        "| LLM drafts | fallbacks |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for c, ideal, cold in rows:
        lines.append(f"| {c} | {ideal:.2f} | {cold['wall']:.2f} | {cold['wall'] / ideal:.2f} | {cold['throttled']} "
                     f"| {cold['waits']} | {cold['waited']:.1f} | {cold['llm']} | {cold['fallback']} |")
    lines += ["", f"Load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after (`os.getloadavg`, 1 "
              f"minute), {os.cpu_count()} CPUs. The 429s are the first burst, sent before any answer stated the "
              "limit; each makes every request pause for its retry-after, and the SDK retries the one that got it."]
    body = "\n".join(lines)
    print(body)
    if args.write:
        write_section("LLM drafting: a stated rate limit", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
