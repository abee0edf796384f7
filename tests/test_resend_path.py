"""``digest resend`` renders and delivers through the run's own path (issue 37): the record's variants as first
sent, only those with a row to send, with the run's contexts and composers; the real Feishu webhook server."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli import app
from flows.media import default_media
from prdigest.deliver.media import MediaRegistry, Medium
from prdigest.deliver.resend import resend_rows
from prdigest.deliver.run import Outcome
from prdigest.kernel.config import load_settings
from prdigest.pipeline.compose import RunOptions, command
from tests.conftest import SAMPLE
from tests.servers.feishu_server import FeishuServer

EDITION = "vllm-project/vllm 2026-11-16..2026-11-17"


def _run_with_kern_failing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, feishu: FeishuServer) -> None:
    """A run of the sample week to two Feishu groups (two variants: the same subsystems, read-first budgets apart)
    whose delivery to kern's group fails on a wrong secret; readers.yaml, state.sqlite and out/ in ``tmp_path``."""
    (tmp_path / "readers.yaml").write_text("readers:\n  - {id: kern, name: Kernels, feishu: kernels-group, budget: 1}\n"
                                           "  - {id: all, name: All, feishu: all-group}\n", encoding="utf-8")
    monkeypatch.setenv("DIGEST_FEISHU_KERNELS_GROUP_URL", feishu.add_bot("kernels-group", secret="right-s3cret"))
    monkeypatch.setenv("DIGEST_FEISHU_KERNELS_GROUP_SECRET", "a-wrong-s3cret")
    monkeypatch.setenv("DIGEST_FEISHU_ALL_GROUP_URL", feishu.add_bot("all-group"))
    first = CliRunner().invoke(app, ["run", "--source", f"jsonl:{SAMPLE}", "--since", "2026-11-16", "--until",
                                     "2026-11-17", "--deliver", "feishu", "--out", str(tmp_path / "out"),
                                     "--language", "en", "--readers", str(tmp_path / "readers.yaml"), "--state",
                                     str(tmp_path / "state.sqlite")])
    assert first.exit_code == 0, first.output


def test_resend_renders_only_the_variants_it_sends_and_sends_what_the_run_rendered(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Failed before the fix: resend rendered every variant of the edition on its own path (here two, for one
    reader's row)."""
    readers, state = tmp_path / "readers.yaml", tmp_path / "state.sqlite"
    with FeishuServer() as feishu:
        _run_with_kern_failing(tmp_path, monkeypatch, feishu)
        assert not feishu.posts("kernels-group") and feishu.posts("all-group")
        digest = json.loads((tmp_path / "out" / "digest.json").read_text(encoding="utf-8"))
        keys = {v["readers"][0]: v["key"] for v in digest["variants"]}
        assert len(set(keys.values())) == 2

        monkeypatch.setenv("DIGEST_FEISHU_KERNELS_GROUP_SECRET", "right-s3cret")
        renders: list[tuple[str, str]] = []

        def counted(medium: Medium) -> Medium:
            def render(edition, variant, context):
                renders.append((medium.name, variant.key))
                return medium.render(edition, variant, context)
            return replace(medium, render=render)

        settings = load_settings(state=str(state))
        options = RunOptions(readers=str(readers))
        with command(settings) as core:
            done = resend_rows(EDITION, ("failed",), state=core.store, settings=settings,
                               media=MediaRegistry([counted(m) for m in default_media()]),
                               readers_of=lambda repo: core.readers(options, repo))
        assert [(r.reader, r.outcome) for r in done.report.results] == [("kern", Outcome.SENT)] and not done.skipped
        assert renders == [("feishu", keys["kern"])]  # kern's variant only, once
        # Sent as the run rendered it: the cards of the run's own file for that variant.
        rendered = json.loads((tmp_path / "out" / "feishu" / f"{keys['kern']}.json").read_text(encoding="utf-8"))
        sent = [p.get("card", p) for p in feishu.posts("kernels-group")]
        wanted = [p.get("card", p) for p in (rendered if isinstance(rendered, list) else [rendered])]
        assert [json.dumps(c, sort_keys=True) for c in sent] == [json.dumps(c, sort_keys=True) for c in wanted]


def test_resend_of_one_reader_reads_only_that_readers_variant_from_the_record(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Failed before resend read variants one by one: it loaded the whole record, every variant's row read and
    checked (here the other variant's row is unreadable, and the resend of kern never needs it)."""
    import sqlite3

    readers, state = tmp_path / "readers.yaml", tmp_path / "state.sqlite"
    with FeishuServer() as feishu:
        _run_with_kern_failing(tmp_path, monkeypatch, feishu)
        digest = json.loads((tmp_path / "out" / "digest.json").read_text(encoding="utf-8"))
        keys = {v["readers"][0]: v["key"] for v in digest["variants"]}
        with sqlite3.connect(state) as db:
            assert db.execute("UPDATE edition_variants SET body = 'not json' WHERE variant = ?",
                              (keys["all"],)).rowcount == 1
        monkeypatch.setenv("DIGEST_FEISHU_KERNELS_GROUP_SECRET", "right-s3cret")
        settings = load_settings(state=str(state))
        options = RunOptions(readers=str(readers))
        with command(settings) as core:
            done = resend_rows(EDITION, ("failed",), state=core.store, settings=settings, media=default_media(),
                               readers_of=lambda repo: core.readers(options, repo))
        assert [(r.reader, r.outcome) for r in done.report.results] == [("kern", Outcome.SENT)] and not done.skipped
        assert feishu.posts("kernels-group")
