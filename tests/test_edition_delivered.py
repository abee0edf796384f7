"""An edition already delivered is recognised before collecting (issue 12.5): a second run says so, asks no editor
to review it and keeps ``digest.json`` as delivered; ``--resend-edition`` runs it again on purpose, and the
ledger still sends nobody a second copy."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli import app
from flows.media import default_media
from prdigest.kernel.config import Settings
from prdigest.pipeline.compose import RunOptions, build_services
from prdigest.pipeline.edition import EditionPipeline
from tests.conftest import SAMPLE
from tests.servers.smtp_server import SmtpServer

READERS = """\
readers:
  - id: all
    name: All
    email: all@example.com
editors:
  - name: Ann Editor
    email: ann@example.com
"""


def test_a_delivered_outbox_week_sends_nothing_again_and_status_lists_its_rows(tmp_path: Path) -> None:
    state, out = tmp_path / "s.sqlite", tmp_path / "out"
    args = ["run", "--source", f"jsonl:{SAMPLE}", "--since", "2026-11-16", "--until", "2026-11-17", "--out", str(out),
            "--state", str(state), "--language", "en"]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    files = sorted((out / "outbox").iterdir())
    assert files
    stamps = {p: p.stat().st_mtime_ns for p in files}
    for path in files:
        path.unlink()  # a second run must not write them again
    second = CliRunner().invoke(app, args)
    assert second.exit_code == 0, second.output
    assert "was already delivered" in " ".join(second.output.split())
    assert not any(p.exists() for p in stamps)
    status = CliRunner().invoke(app, ["status", "vllm-project/vllm 2026-11-16..2026-11-17", "--state", str(state)],
                                env={"COLUMNS": "200"})
    assert status.exit_code == 0, status.output
    assert "outbox-email" in status.output and "sent" in status.output
    shown = " ".join(status.output.split())
    assert f"{len(files)} sent" in shown and "(edition delivered)" in shown
    assert "edition record: delivered, revision 1, content sha256:" in shown


@pytest.mark.prefect
def test_an_edition_already_delivered_stops_before_collecting_and_keeps_digest_json(prefect_api,
                                                                                      tmp_path: Path) -> None:
    (tmp_path / "readers.yaml").write_text(READERS, encoding="utf-8")
    out = tmp_path / "out"
    with SmtpServer(tmp_path / "tls") as smtp:
        env = {"DIGEST_SMTP_HOST": "127.0.0.1", "DIGEST_SMTP_PORT": str(smtp.port), "DIGEST_SMTP_USER": smtp.user,
               "DIGEST_SMTP_PASSWORD": smtp.password, "DIGEST_FROM": "pr-digest <digest@example.com>",
               "SSL_CERT_FILE": str(smtp.cert)}
        args = ["run", "--source", f"jsonl:{SAMPLE}", "--since", "2026-11-16", "--until", "2026-11-17",
                "--deliver", "smtp", "--readers", str(tmp_path / "readers.yaml"), "--out", str(out),
                "--state", str(tmp_path / "state.sqlite"), "--language", "en"]
        first = CliRunner().invoke(app, args, env=env)
        assert first.exit_code == 0, first.output
        assert [a for m in smtp.messages for a in m.rcpt_tos] == ["all@example.com"]
        delivered = (out / "digest.json").read_bytes()
        # Again, now asking for a review in the UI: no review request reaches the editor, nothing is drafted.
        second = CliRunner().invoke(app, [*args, "--approve", "ui"], env=env)
        assert second.exit_code == 0, second.output
        text = " ".join(second.output.split())
        assert "2026-11-16..2026-11-17 was already delivered" in text
        assert "--resend-edition" in text and "Collecting" not in text
        assert [a for m in smtp.messages for a in m.rcpt_tos] == ["all@example.com"]  # the editor was not asked
        assert (out / "digest.json").read_bytes() == delivered
        # On purpose: the run goes through again; the reader already sent is skipped by the ledger.
        third = CliRunner().invoke(app, [*args, "--resend-edition"], env=env)
        assert third.exit_code == 0, third.output
        assert "sent by an earlier run of this edition" in " ".join(third.output.split())
        assert len(smtp.messages) == 1


@pytest.mark.slow  # ~3 s: services, a ledger and a run of the pipeline
def test_already_delivered_names_the_flag_and_the_state(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Without Prefect: EditionPipeline.run() stops the same way (benchmarks and the Prefect-free paths)."""
    state = tmp_path / "state.sqlite"
    options = RunOptions(source=f"jsonl:{SAMPLE}", since="2026-11-16", until="2026-11-17", deliver="smtp",
                         out=str(tmp_path / "out"), state=str(state))
    settings = Settings(state=state, smtp_host="127.0.0.1", smtp_port=1, from_address="d@example.com",
                        smtp_security="none")
    services = build_services(options.model_copy(update={"deliver": "outbox"}), settings, default_media())
    try:
        EditionPipeline(services).run()  # delivered to the outbox: the edition's record says delivered
    finally:
        services.close()
    (tmp_path / "out" / "digest.json").unlink()
    services = build_services(options, settings, default_media())
    try:
        summary = EditionPipeline(services).run()
    finally:
        services.close()
    assert summary.skipped.startswith("vllm-project/vllm 2026-11-16..2026-11-17 was already delivered")
    assert "--resend-edition" in summary.skipped
    assert summary.entries == 0 and not (tmp_path / "out" / "digest.json").exists()


def test_a_run_after_a_partial_delivery_sends_what_is_pending_from_the_published_edition(tmp_path: Path) -> None:
    """A reader deferred by the server (451) stays pending; the next run sends that reader only, from the edition
    as approved and published, with no new collection or review, and keeps digest.json as delivered."""
    readers = tmp_path / "readers.yaml"
    readers.write_text("readers:\n  - {id: a, name: A, email: a@example.com}\n"
                       "  - {id: b, name: B, email: b@example.com}\n", encoding="utf-8")
    state, out = tmp_path / "state.sqlite", tmp_path / "out"
    options = RunOptions(source=f"jsonl:{SAMPLE}", since="2026-11-16", until="2026-11-17", deliver="smtp",
                         readers=str(readers), out=str(out), state=str(state), language="en")
    with SmtpServer(tmp_path / "tls", security="none", user=None) as smtp:
        settings = Settings(state=state, smtp_host="127.0.0.1", smtp_port=smtp.port, smtp_security="none",
                            from_address="pr-digest <digest@example.com>")

        def run():
            services = build_services(options, settings, default_media(), site=None)
            try:
                return EditionPipeline(services).run()
            finally:
                services.close()

        smtp.defer.add("b@example.com")
        first = run()
        assert [r for r, _, _ in first.sent] == ["a"] and [r for r, _, _ in first.pending] == ["b"]
        delivered = (out / "digest.json").read_bytes()
        smtp.defer.clear()
        second = run()
        assert not second.skipped and [r for r, _, _ in second.sent] == ["b"] and second.already_sent == 1
        assert sorted(a for m in smtp.messages for a in m.rcpt_tos) == ["a@example.com", "b@example.com"]
        assert (out / "digest.json").read_bytes() == delivered
        third = run()  # nothing pending any more: the edition is delivered, the run stops before collecting
        assert third.skipped and len(smtp.messages) == 2
