"""Telling the editors that a review waits: what the run says it did is what happened (issue 30: it said
"told 1 editor(s)" after the only notice had failed)."""

from __future__ import annotations

from pathlib import Path

from flows.media import default_media
from flows.notify import tell_editors
from prdigest.kernel.config import Settings
from prdigest.pipeline.compose import RunOptions, make_channels
from prdigest.readers.file import Editor
from tests.factories import edition, entry

TEXT = "o/r: 1 draft entry waits for your review."


def _outbox(out: Path):
    media = default_media("outbox")
    channels = make_channels(RunOptions(deliver="outbox", out=str(out)), Settings(), out, media)
    return [m for m in media if m.name in channels], channels


def test_the_only_notice_failing_is_said_so_not_counted_as_told(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "outbox").write_text("a file where the outbox folder should be", encoding="utf-8")
    media, channels = _outbox(out)
    report = tell_editors(edition([entry(1, ["docs"])]), [Editor(name="Lin", email="lin@example.com")], TEXT,
                          media, channels, "d@example.com")
    assert report.told == [] and list(report.failed) == ["Lin"] and report.results == []
    line = report.line("o/r 2026-W47")
    assert line.startswith("no editor was told that o/r 2026-W47 waits for review; not told: Lin: email failed (")
    assert "told 1" not in line


def test_told_failed_and_unreachable_editors_are_each_named(tmp_path: Path) -> None:
    media, channels = _outbox(tmp_path / "out")
    email_only = [m for m in media if m.name == "email"]
    editors = [Editor(name="Lin", email="lin@example.com"), Editor(name="Bo", feishu="editors-group")]
    report = tell_editors(edition([entry(1, ["docs"])]), editors, TEXT, email_only, channels, "d@example.com")
    assert report.told == ["Lin"] and report.unreachable == ["Bo"] and len(report.results) == 1
    assert Path(report.results[0]).exists()
    assert report.line("o/r 2026-W47") == ("told 1 of 2 editors that o/r 2026-W47 waits for review (Lin); not "
                                           "told: Bo: no address on the run's media")
