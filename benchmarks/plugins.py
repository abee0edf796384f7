"""What the one plugin mechanism costs: entry points read per group, and a big readers file with a plugin's key.

    .venv/bin/python -m benchmarks.plugins [--readers 10000] [--write]

1. One scan of a group's installed entry points (``importlib.metadata``: every distribution's metadata), and a
   lookup through the kernel registry (``prdigest.kernel.registry``: the scan kept per ``sys.path``).
2. A readers file of N readers loaded and validated (``load_readers``), e-mail and Slack only, and again with
   every reader also addressed on a plugin medium (``toy: room-N``, tests/fixtures/toy_medium installed from a
   dist-info on a temporary sys.path entry), and ``personal_media`` over every reader of the second.

``--write`` replaces the "Plugins" section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import sys
import tempfile
import time
from importlib.metadata import entry_points
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _timed(fn, repeat: int = 1) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - start) / repeat


def _readers_file(path: Path, n: int, toy: bool) -> None:
    lines = ["readers:"]
    for i in range(n):
        lines += [f"  - id: r{i}", f"    name: Reader {i}", f"    email: r{i}@example.com", f"    slack: U{i:08d}"]
        if toy:
            lines.append(f"    toy: room-{i}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--readers", type=int, default=10_000)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()

    from prdigest.kernel.registry import registry
    from prdigest.readers.addresses import ADDRESSES
    from prdigest.readers.file import load_readers
    from prdigest.readers.selfservice.preferences import personal_media
    from tests.plugin_support import install_distribution

    scan = _timed(lambda: entry_points(group="pr_digest.addresses"), 50)
    view = registry("pr_digest.addresses", "address", "address")
    view.names()
    lookup = _timed(lambda: view["email"], 1000)

    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        shutil.copytree(ROOT / "tests" / "fixtures" / "toy_medium" / "toy_medium", site / "toy_medium")
        install_distribution(site, "toy-medium", {"pr_digest.addresses": {"toy": "toy_medium:ADDRESS"}})
        sys.path.insert(0, str(site))
        importlib.invalidate_caches()
        assert "toy" in ADDRESSES
        plain, toy = Path(tmp) / "plain.yaml", Path(tmp) / "toy.yaml"
        _readers_file(plain, args.readers, toy=False)
        _readers_file(toy, args.readers, toy=True)
        load_plain = _timed(lambda: load_readers(plain))
        loaded: list = []
        load_toy = _timed(lambda: loaded.append(load_readers(toy)))
        readers = loaded[0].readers
        personal = _timed(lambda: [personal_media(r) for r in readers])
        assert all(r.address("toy") for r in readers)

    n = args.readers
    body = "\n".join([
        f"Command: `.venv/bin/python -m benchmarks.plugins --readers {n} --write`; load average "
        f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}.",
        "",
        "| measure | time |",
        "| --- | ---: |",
        f"| one scan of a group's entry points (`importlib.metadata`) | {scan * 1000:.2f} ms |",
        f"| a lookup through the kernel registry (scan kept per sys.path) | {lookup * 1e6:.1f} µs |",
        f"| load {n:,} readers (e-mail, Slack) | {load_plain:.2f} s |",
        f"| load {n:,} readers (e-mail, Slack, and a plugin medium's `toy:` key) | {load_toy:.2f} s |",
        f"| `personal_media` over those {n:,} readers | {personal * 1000:.0f} ms ({personal / n * 1e6:.1f} µs a reader) |",
        "",
        "Before the scan was kept, every lookup scanned (the first row): `personal_media` asked the registry once per "
        "address, about 3 ms each, so 10,000 readers with two addresses would have spent about a minute there.",
    ])
    print(body)
    if args.write:
        from benchmarks.report import write_section

        write_section("Plugins", body)


if __name__ == "__main__":
    main()
