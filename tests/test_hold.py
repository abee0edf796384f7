"""Hold: the editor holds the edition (the record's ``held`` status), not each of its entries; nothing is sent and
the output folder keeps no earlier edition's messages."""

from __future__ import annotations

import json
from pathlib import Path

from flows.media import default_media
from prdigest.kernel.config import Settings
from prdigest.pipeline.compose import RunOptions, build_services
from prdigest.pipeline.edition import EditionPipeline
from prdigest.pipeline.loop import run_edition
from prdigest.review import ReviewDecision, apply_decision
from prdigest.state.record import EditionRecord, Status
from renderers.site import build_site
from tests.conftest import SAMPLE


class HoldingSteps:
    """The pipeline's own steps, with an editor who holds the week in review."""

    def __init__(self, pipeline: EditionPipeline) -> None:
        self.pipeline = pipeline

    def __getattr__(self, name: str):
        return getattr(self.pipeline, name)

    def review(self, record: EditionRecord) -> EditionRecord:
        held = apply_decision(record.edition, ReviewDecision(decision="hold", approver="Ann", note="wrong week"))
        return self.pipeline.save(held, Status.HELD, expect=record)


def _run(tmp_path: Path, since: str, until: str, steps=None):
    options = RunOptions(source=f"jsonl:{SAMPLE}", since=since, until=until, language="en", deliver="outbox",
                         out=str(tmp_path / "out"), state=str(tmp_path / "state.sqlite"))
    services = build_services(options, Settings(state=options.state), default_media(), site=build_site)
    try:
        pipeline = EditionPipeline(services)
        return run_edition(pipeline, steps(pipeline) if steps else pipeline)
    finally:
        services.close()


def test_a_held_edition_keeps_its_entries_as_drafted_sends_nothing_and_says_so(tmp_path: Path) -> None:
    earlier = _run(tmp_path, "2026-11-16", "2026-11-19")  # an earlier edition delivered into the same folder
    assert earlier.sent and (tmp_path / "out" / "outbox").is_dir()
    summary = _run(tmp_path, "2026-11-19", "2026-11-23", HoldingSteps)
    assert not summary.sent and summary.published == 0 and summary.entries > 0
    assert summary.held.startswith(f"{summary.edition} is held by Ann: nothing is sent, and its {summary.entries} "
                                   "entries stay as drafted")
    digest = json.loads((tmp_path / "out" / "digest.json").read_text(encoding="utf-8"))
    assert {e["status"] for e in digest["entries"]} == {"draft"}  # was: every entry "rejected"
    assert digest["approver"] == "Ann" and digest["review_note"] == "held: nothing sent. wrong week"
    left = sorted(p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*")
                  if p.is_file() and p.relative_to(tmp_path / "out").parts[0] != "site")
    assert left == ["digest.json"]  # the earlier edition's email, slack, feishu and outbox files are gone
