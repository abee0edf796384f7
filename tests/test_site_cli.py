"""``digest site`` rebuilds the archive from the state store alone; ``digest serve`` previews it over HTTP."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import urllib.error
import urllib.request
from datetime import timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli import app
from prdigest.state.history import record_edition
from prdigest.state.store import open_store
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


def test_digest_site_of_a_missing_state_file_refuses_and_creates_nothing(tmp_path: Path) -> None:
    missing, out = tmp_path / "typo.sqlite", tmp_path / "out"
    result = CliRunner().invoke(app, ["site", "--state", str(missing), "--out", str(out)])
    assert result.exit_code == 2 and "no such file" in result.output and "typo.sqlite" in result.output
    assert not missing.exists() and not out.exists()


def test_digest_site_of_an_empty_state_refuses_to_write_an_empty_archive(tmp_path: Path) -> None:
    empty, out = tmp_path / "empty.sqlite", tmp_path / "out"
    open_store(empty).close()
    result = CliRunner().invoke(app, ["site", "--state", str(empty), "--out", str(out)])
    assert result.exit_code == 2 and "no edition" in result.output and "empty archive" in result.output
    assert not (out / "site").exists()
    state = _state(tmp_path)  # a state with editions, but none of the repo asked for
    result = CliRunner().invoke(app, ["site", "--state", str(state), "--out", str(out), "--repo", "other/repo"])
    assert result.exit_code == 2 and "no edition of other/repo" in result.output
    assert not (out / "site").exists()


def test_digest_site_writes_world_readable_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    old = os.umask(0o077)  # even under a strict umask: the web server must read what is published
    try:
        assert CliRunner().invoke(app, ["site", "--state", str(_state(tmp_path)), "--out", str(out)]).exit_code == 0
    finally:
        os.umask(old)
    modes = {oct(p.stat().st_mode & 0o777) for p in (out / "site").rglob("*") if p.is_file()}
    assert modes == {"0o644"}


@pytest.mark.slow
def test_digest_serve_refuses_paths_that_leave_the_site_and_lists_no_folder(tmp_path: Path) -> None:
    state = _state(tmp_path)
    out = tmp_path / "out"
    assert CliRunner().invoke(app, ["site", "--state", str(state), "--out", str(out)]).exit_code == 0
    secret = tmp_path / "secret.txt"
    secret.write_text("root:x:0:0", encoding="utf-8")
    os.symlink(secret, out / "site" / "passwd.html")
    os.symlink("/etc", out / "site" / "etc")
    os.symlink(secret, out / "site" / "editions" / "index.html")  # a folder's index pointing outside
    proc = subprocess.Popen([sys.executable, "-m", "flows.cli", "serve", str(out), "--port", "0"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = re.search(r"http://127\.0\.0\.1:\d+/", proc.stdout.readline()).group()
        for path in ("passwd.html", "etc/passwd", "editions/", "assets/", "editions/vllm-project/", "%2e%2e/secret.txt"):
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(url + path, timeout=10)
            assert refused.value.code == 404, path
            assert b"root:" not in refused.value.read() and b"Directory listing" not in refused.value.read()
        with urllib.request.urlopen(url + "editions/vllm-project/vllm/2026-W48/", timeout=10) as resp:
            assert resp.status == 200 and b"2026-W48" in resp.read()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
