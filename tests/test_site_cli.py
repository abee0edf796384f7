"""``digest site`` rebuilds the archive from the state store alone; ``digest serve`` previews it over HTTP."""

from __future__ import annotations

import re
import subprocess
import sys
import urllib.request
from datetime import timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli import app
from prdigest.history import record_edition
from prdigest.store import open_store
from tests.conftest import ROOT
from tests.factories import WEEK, edition, entry


def _state(tmp_path: Path) -> Path:
    path = tmp_path / "state.sqlite"
    with open_store(path) as store:
        for n in range(2):
            ed = edition([entry(100 * (n + 1), ["kernels"], "deep-read")], language="en")
            record_edition(store, ed.model_copy(update={"since": WEEK + timedelta(weeks=n),
                                                        "until": WEEK + timedelta(weeks=n + 1)}))
    return path


def test_digest_site_rebuilds_every_stored_edition_into_out_site(tmp_path: Path) -> None:
    state = _state(tmp_path)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["site", "--state", str(state), "--out", str(out),
                                      "--site-url", "https://digest.example.com/"])
    assert result.exit_code == 0, result.output
    assert "2 editions" in result.output
    assert (out / "site/editions/vllm-project/vllm/2026-W47/index.html").is_file()
    assert (out / "site/editions/vllm-project/vllm/2026-W48/index.html").is_file()
    assert 'href="https://digest.example.com/feed.xml"' in (out / "site/feed.xml").read_text(encoding="utf-8")


def test_digest_site_takes_the_url_from_the_environment_and_refuses_a_bad_one(tmp_path: Path, monkeypatch) -> None:
    state = _state(tmp_path)
    monkeypatch.setenv("DIGEST_SITE_URL", "javascript:alert(1)")
    result = CliRunner().invoke(app, ["site", "--state", str(state), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "DIGEST_SITE_URL" in result.output and "http(s)" in result.output
    assert not (tmp_path / "out" / "site").exists()


@pytest.mark.slow
def test_digest_serve_previews_the_site_over_http(tmp_path: Path) -> None:
    state = _state(tmp_path)
    out = tmp_path / "out"
    assert CliRunner().invoke(app, ["site", "--state", str(state), "--out", str(out)]).exit_code == 0
    proc = subprocess.Popen([sys.executable, "-m", "flows.cli", "serve", str(out), "--port", "0"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/", line).group()
        with urllib.request.urlopen(url + "index.html", timeout=10) as resp:
            assert resp.status == 200 and b"2026-W48" in resp.read()
        with urllib.request.urlopen(url + "search-index.json", timeout=10) as resp:
            assert resp.headers["Content-Type"].startswith("application/json")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_digest_serve_says_what_to_do_when_there_is_no_site(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["serve", str(tmp_path)])
    assert result.exit_code == 2 and "digest site --out" in result.output
