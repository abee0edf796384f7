"""Feishu cards: how a week of N entries is rendered and split under the 20 KB per-request limit, and how
long one group's cards take to post at Feishu's 5 requests a second.

    .venv/bin/python -m benchmarks.feishu_cards [--entries 58 300 2000] [--write]

Per size: render time (median of 5, one variant of every entry, zh-CN), cards, largest and total request
bytes (signed), entries shown (the rest past the 20-card cap is announced in the last card). Then the
300-entry week posted, signed, to the local webhook (`tests/servers/feishu_server.py`, which refuses a
6th request within a second): wall time and refusals. ``--write`` replaces the "Feishu cards" section of
BENCHMARKS.md, with the load average.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.report import write_section  # noqa: E402

SECRET = "bench-secret"


def sample_week(n: int):
    """The shipped sample week drafted offline and approved, cycled to ``n`` entries with distinct numbers."""
    from flows.media import default_media
    from prdigest.kernel.config import Settings
    from prdigest.pipeline.compose import RunOptions, build_services
    from prdigest.pipeline.edition import EditionPipeline, auto_approve

    with tempfile.TemporaryDirectory() as out:
        services = build_services(RunOptions(out=out, language="zh-CN"), Settings(state=f"{out}/s.sqlite"),
                                  default_media())
        try:
            pipeline = EditionPipeline(services)
            collected = pipeline.collect()
            edition = auto_approve(pipeline.new_edition(collected, pipeline.draft(collected.prs)))
        finally:
            services.close()
    base = edition.entries
    url = "https://github.com/vllm-project/vllm/pull/{}"
    entries = [base[i % len(base)].model_copy(update={"number": 100_000 + i, "url": url.format(100_000 + i)})
               for i in range(n)]
    return edition.model_copy(update={"entries": entries})


def measure(n: int) -> dict:
    from prdigest.connect.variants import Filter, Variant, ordered
    from prdigest.deliver.feishu import body_bytes, sign
    from renderers.feishu import render_feishu

    edition = sample_week(n)
    variant = Variant(Filter(), ordered(edition.published))
    times = []
    for _ in range(5):
        start = time.perf_counter()
        cards = render_feishu(edition, variant, site_url="https://digest.example.com/")
        times.append(time.perf_counter() - start)
    signed = [body_bytes({"timestamp": "1764000000", "sign": sign(SECRET, 1764000000), **c}) for c in cards]
    shown = sum(t.count("· [#") for c in cards for el in c["card"]["elements"] if el["tag"] == "note"
                for t in [el["elements"][0]["content"]])
    return {"entries": n, "render_ms": statistics.median(times) * 1000, "cards": len(cards), "max": max(signed),
            "total": sum(signed), "shown": shown, "cards_list": cards}


def post(cards: list[dict]) -> dict:
    from pydantic import SecretStr

    from prdigest.deliver import Message
    from prdigest.deliver.feishu import FeishuChannel
    from prdigest.kernel.config import FeishuBot
    from prdigest.readers.file import Reader
    from tests.servers.feishu_server import FeishuServer

    with FeishuServer() as server:
        url = server.add_bot("bench-group", secret=SECRET)
        channel = FeishuChannel({"bench-group": FeishuBot(url=SecretStr(url), secret=SecretStr(SECRET))})
        message = Message(Reader(id="bench", name="Bench", feishu="bench-group"), "all", "feishu", "bench-group",
                          cards)
        start = time.perf_counter()
        channel.push(message)
        wall = time.perf_counter() - start
        channel.close()
        refused = sum(1 for c in server.calls if c.code != 0)
        return {"cards": len(server.posts("bench-group")), "wall": wall, "refused": refused}


def section(rows: list[dict], posted: dict, load: str) -> str:
    lines = ["Command: `.venv/bin/python -m benchmarks.feishu_cards --write` "
             f"(load average at the end: {load}; 2 shared cores).", "",
             "One variant of every entry (the sample week cycled, zh-CN, with archive permalinks), rendered by "
             "`renderers/feishu.py`; sizes are the signed request bodies Feishu's 20 KB limit counts (kept under "
             "20,000 B).", "",
             "| entries | render ms (median of 5) | cards | largest request B | total KiB | entries shown |",
             "| ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        lines.append(f"| {r['entries']:,} | {r['render_ms']:.0f} | {r['cards']} | {r['max']:,} "
                     f"| {r['total'] / 1024:.0f} | {r['shown']:,} |")
    lines += ["", f"Posting the {rows[1]['entries'] if len(rows) > 1 else rows[0]['entries']}-entry week's "
              f"{posted['cards']} signed cards to one group through `FeishuChannel` (the local webhook enforces 5 "
              f"requests a second and 100 a minute): {posted['wall']:.1f} s, {posted['refused']} refused. The "
              "channel paces itself from each answer's arrival, so the webhook never sees a sixth request within "
              "a second; a week beyond 20 cards says in its last card how many entries are only in the e-mail "
              "and the archive."]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, nargs="+", default=[58, 300, 2000])
    parser.add_argument("--write", action="store_true", help="replace the Feishu cards section of BENCHMARKS.md")
    args = parser.parse_args()
    rows = [measure(n) for n in args.entries]
    for r in rows:
        print({k: v for k, v in r.items() if k != "cards_list"}, flush=True)
    posted = post(rows[1 if len(rows) > 1 else 0]["cards_list"])
    print(posted)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    body = section(rows, posted, load)
    print(body)
    if args.write:
        write_section("Feishu cards", body)


if __name__ == "__main__":
    main()
