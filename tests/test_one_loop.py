"""One loop: the same week run by the core loop directly (what `digest run` does without a Prefect API) and by the
Prefect flow writes the same files, byte for byte, except timestamps, message ids and MIME boundaries."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from flows.media import default_media
from prdigest.kernel.config import Settings
from prdigest.pipeline.compose import RunOptions, build_services
from prdigest.pipeline.edition import EditionPipeline
from renderers.site import build_site
from tests.conftest import SAMPLE

#: What may differ between two runs of one week: when it ran, and the ids and boundaries a message gets.
_VOLATILE = [
    (re.compile(rb'"(generated_at|approved_at)": "[^"]*"'), rb'"\1": ""'),
    (re.compile(rb"^(Date|Message-ID): .*$", re.MULTILINE), rb"\1: "),
    (re.compile(rb"={10,}[0-9]+=*"), b"=BOUNDARY="),
    (re.compile(rb"<(updated|published)>[^<]*</"), rb"<\1></"),
    (re.compile(rb"(Generated|generated|Updated) [0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9:.+Z]*"), rb"\1 "),
]


def _files(out: Path) -> dict[str, bytes]:
    found = {}
    for path in sorted(out.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            for pattern, replacement in _VOLATILE:
                data = pattern.sub(replacement, data)
            found[path.relative_to(out).as_posix()] = data
    return found


def _options(tmp: Path, name: str) -> dict[str, str]:
    return {"source": f"jsonl:{SAMPLE}", "since": "2026-11-16", "until": "2026-11-23", "language": "en",
            "out": str(tmp / name / "out"), "state": str(tmp / name / "state.sqlite")}


@pytest.mark.prefect
def test_the_same_week_through_the_core_loop_and_the_prefect_flow_writes_the_same_files(prefect_api,
                                                                                          tmp_path: Path) -> None:
    from flows.edition import digest_edition

    direct = _options(tmp_path, "direct")
    services = build_services(RunOptions(**direct), Settings(state=direct["state"]), default_media(), site=build_site)
    try:
        summary = EditionPipeline(services).run()
    finally:
        services.close()
    assert summary.sent and not summary.skipped

    flowed = _options(tmp_path, "flow")
    flow_summary = digest_edition(**flowed)
    fields = {"out", "files", "sent"}  # the sent rows name the outbox files, under each run's own folder
    assert flow_summary.model_dump(exclude=fields) == summary.model_dump(exclude=fields)
    assert [r[:2] for r in flow_summary.sent] == [r[:2] for r in summary.sent]

    a, b = _files(Path(direct["out"])), _files(Path(flowed["out"]))
    assert sorted(a) == sorted(b)
    assert len(a) > 40 and any(name.startswith("outbox/") for name in a) and "site/index.html" in a
    different = [name for name in a if a[name] != b[name]]
    assert different == []
