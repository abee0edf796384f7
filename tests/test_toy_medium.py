"""A medium pr-digest does not ship, installed from a package of its own (tests/fixtures/toy_medium: a channel, a
renderer and a registration, declared as entry points in a dist-info folder on the path), is addressed in the
readers file by its own key, delivered to by ``digest run --deliver toy`` over a real local webhook, and tells
editors a review is waiting; nothing of pr-digest changes for it. Without the package, its key is an unknown
field and its transport an unknown one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.plugin_support import install_distribution
from tests.test_media import HookServer

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "toy_medium" / "toy_medium"

READERS = """\
readers:
  - id: kernels-room
    name: Kernels room
    toy: kernels
    subsystems: [kernels, attention]
  - id: ana
    name: Ana
    email: ana@example.com
    toy: me-ana
editors:
  - name: Lin
    toy: editors
"""


def _install(site: Path) -> Path:
    """The toy distribution as an installer leaves it: its package and a dist-info with its entry points."""
    shutil.copytree(FIXTURE, site / "toy_medium", ignore=shutil.ignore_patterns("__pycache__"))
    install_distribution(site, "toy-medium", {"pr_digest.addresses": {"toy": "toy_medium:ADDRESS"},
                                              "pr_digest.media": {"toy": "toy_medium:MEDIUM"}})
    return site


def _digest(tmp_path: Path, site: Path | None, hook_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "DIGEST_", "PYTHONPATH", "TOY_"))}
    (tmp_path / "prefect-home").mkdir(exist_ok=True)
    env = {**keep, "PREFECT_HOME": str(tmp_path / "prefect-home"), "DIGEST_STATE": str(tmp_path / "s.sqlite"),
           "TOY_HOOK_URL": hook_url, "PYTHONPATH": os.pathsep.join([*([str(site)] if site else []), str(ROOT)])}
    return subprocess.run([sys.executable, "-m", "flows.cli", *args], cwd=tmp_path, env=env, text=True,
                          capture_output=True, timeout=300)


@pytest.fixture
def hook():
    with HookServer() as server:
        yield server


def test_an_installed_medium_is_addressed_in_the_readers_file_and_delivered_by_digest_run(hook, tmp_path: Path) -> None:
    site = _install(tmp_path / "site")
    (tmp_path / "readers.yaml").write_text(READERS, encoding="utf-8")
    ran = _digest(tmp_path, site, hook.url, "run", "--source", "sample", "--deliver", "toy", "--readers",
                  "readers.yaml", "--out", "out", "--language", "en")
    assert ran.returncode == 0, ran.stderr + ran.stdout
    assert sorted(path for path, _ in hook.posts) == ["/rooms/kernels", "/rooms/me-ana"]
    out = tmp_path / "out"
    for path, body in hook.posts:
        assert body["to"] == {"/rooms/kernels": "Kernels room", "/rooms/me-ana": "Ana"}[path]
        assert body["lines"] and body["edition"]
        assert any(json.loads(f.read_text(encoding="utf-8"))["lines"] == body["lines"]
                   for f in (out / "toy").glob("*.json"))  # what was sent is the variant its renderer wrote
    kernels = dict(hook.posts)["/rooms/kernels"]["lines"]
    assert len(kernels) < len(dict(hook.posts)["/rooms/me-ana"]["lines"])  # the room's filter applies
    assert list((out / "email").glob("*.html"))  # the shipped media still render; only toy is delivered

    again = _digest(tmp_path, site, hook.url, "run", "--source", "sample", "--deliver", "toy", "--readers",
                    "readers.yaml", "--out", "out", "--language", "en")
    assert len(hook.posts) == 2, again.stderr  # the ledger holds both rows as sent: nothing twice


def test_a_bad_toy_address_is_refused_in_one_line_by_the_medium_own_words(hook, tmp_path: Path) -> None:
    site = _install(tmp_path / "site")
    (tmp_path / "readers.yaml").write_text(READERS.replace("toy: kernels", "toy: Kernels Room"), encoding="utf-8")
    ran = _digest(tmp_path, site, hook.url, "run", "--source", "sample", "--deliver", "toy", "--readers",
                  "readers.yaml", "--out", "out")
    assert ran.returncode != 0 and not hook.posts
    (line,) = [ln for ln in ran.stderr.splitlines() + ran.stdout.splitlines() if ln.startswith("error:")]
    assert "readers.yaml" in line and "toy: 'Kernels Room' is not a toy room" in line, line


def test_digest_run_help_offers_the_installed_transport(hook, tmp_path: Path) -> None:
    shown = _digest(tmp_path, _install(tmp_path / "site"), hook.url, "run", "--help")
    assert "feishu,slack,smtp,toy" in shown.stdout.replace("\n", ""), shown.stdout


def test_without_the_package_its_key_and_its_transport_are_unknown(hook, tmp_path: Path) -> None:
    (tmp_path / "readers.yaml").write_text(READERS, encoding="utf-8")
    ran = _digest(tmp_path, None, hook.url, "run", "--source", "sample", "--deliver", "toy", "--readers",
                  "readers.yaml", "--out", "out")
    assert ran.returncode != 0 and not hook.posts
    assert "Extra inputs are not permitted" in ran.stderr + ran.stdout


def test_editors_are_told_on_the_toy_medium_with_its_own_notice(hook, tmp_path: Path, monkeypatch) -> None:
    import importlib

    from flows.media import default_media
    from flows.notify import tell_editors
    from prdigest.kernel.config import Settings
    from prdigest.readers.file import ReadersFile
    from tests.factories import edition, entry

    _install(tmp_path / "site")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    importlib.invalidate_caches()
    monkeypatch.setenv("TOY_HOOK_URL", hook.url)
    try:
        editors = ReadersFile.model_validate({"readers": [{"id": "r", "name": "R", "toy": "r"}],
                                              "editors": [{"name": "Lin", "toy": "editors"},
                                                          {"name": "Mo", "email": "mo@example.com"}]}).editors
        media = [m for m in default_media("toy") if m.name == "toy"]
        report = tell_editors(edition([entry(1, ["kernels"])], "en"), editors, "Review it.", media,
                              {"toy": media[0].channel(Settings())}, "d@example.com")
    finally:
        for name in [m for m in sys.modules if m == "toy_medium" or m.startswith("toy_medium.")]:
            monkeypatch.delitem(sys.modules, name)
    assert report.told == ["Lin"] and report.unreachable == ["Mo"]
    ((path, body),) = hook.posts
    assert path == "/rooms/editors" and body["notice"].startswith("Review waiting") and body["to"] == "Lin"


@pytest.mark.prefect
def test_the_secrets_a_medium_declares_come_from_their_secret_blocks(prefect_api, tmp_path: Path, monkeypatch) -> None:
    import importlib

    from prefect.blocks.system import Secret

    from flows.media import default_media
    from flows.secrets import with_secret_blocks
    from prdigest.kernel.config import Settings

    _install(tmp_path / "site")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    importlib.invalidate_caches()
    for name in ("TOY_HOOK_URL", "SLACK_BOT_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    Secret(value="http://127.0.0.1:9/from-block").save("toy-hook-url", overwrite=True)
    Secret(value="xoxb-from-block").save("slack-bot-token", overwrite=True)
    try:
        settings, used = with_secret_blocks(Settings(), default_media("toy"))
        assert settings.slack_bot_token is not None  # a shipped medium's secret is a setting
        assert settings.slack_bot_token.get_secret_value() == "xoxb-from-block"
        assert os.environ["TOY_HOOK_URL"] == "http://127.0.0.1:9/from-block"  # a plugin's, its channel's own
        assert {"toy-hook-url", "slack-bot-token"} <= set(used)
        monkeypatch.setenv("TOY_HOOK_URL", "http://127.0.0.1:9/from-env")
        _, used = with_secret_blocks(Settings(), default_media("toy"))
        assert os.environ["TOY_HOOK_URL"].endswith("from-env") and "toy-hook-url" not in used  # the environment wins
    finally:
        monkeypatch.delenv("TOY_HOOK_URL", raising=False)
        for name in [m for m in sys.modules if m == "toy_medium" or m.startswith("toy_medium.")]:
            monkeypatch.delitem(sys.modules, name)
