"""Media as a registry: a medium the product does not ship (a JSON webhook to a local HTTP server) is
registered from outside and goes through the same pipeline, flow, outbox and ledger as e-mail and Slack,
without a line of the flow or the pipeline changing."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.error import URLError
from urllib.request import Request, urlopen

import pytest

from flows.media import default_media, register_medium, unregister_medium
from prdigest.connect.variants import Variant
from prdigest.deliver import Message, Parts
from prdigest.deliver.failure import ChannelUnavailable
from prdigest.deliver.media import MediaRegistry, Medium, RenderContext, Rendering
from prdigest.kernel.config import load_settings
from prdigest.kernel.errors import ConfigError
from prdigest.kernel.models import Edition
from prdigest.pipeline.compose import RunOptions, build_services
from prdigest.pipeline.edition import EditionPipeline
from tests.plugin_support import install_distribution
from tests.servers import LoopbackServer


class HookServer(LoopbackServer):
    """Records every JSON body POSTed to it; answers with a delivery id."""

    def __init__(self) -> None:
        self.posts: list[tuple[str, dict]] = []
        self.lock = threading.Lock()

    def make_httpd(self) -> ThreadingHTTPServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.posts.append((self.path, body))
                    n = len(server.posts)
                reply = json.dumps({"id": f"hook-{n}"}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: object) -> None:
                pass

        return ThreadingHTTPServer(("127.0.0.1", 0), Handler)

    @property
    def url(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"


# --- the extra medium: one renderer, one channel, one registration ------------------------------------

def render_hook(edition: Edition, variant: Variant, context: RenderContext) -> Rendering:
    payload = {"edition": edition.name, "variant": variant.key,
               "entries": [{"number": e.number, "verdict": e.verdict.value, "headline": e.headline}
                           for e in variant.entries]}
    data = json.dumps(payload, ensure_ascii=False).encode()
    return Rendering("webhook", variant.key, payload, {f"webhook/{variant.key}.json": data})


class HookChannel:
    name = "webhook"

    def check(self) -> None:
        pass

    def push(self, message: Message, parts: Parts | None = None) -> str:
        request = Request(message.recipient, data=json.dumps(message.payload).encode(), method="POST",
                          headers={"Content-Type": "application/json"})
        try:
            with urlopen(request, timeout=5) as reply:
                return json.loads(reply.read())["id"]
        except URLError as exc:
            raise ChannelUnavailable(f"webhook {message.recipient}: {exc}") from None

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


def hook_medium(base_url: str) -> Medium:
    return Medium(
        name="webhook", transport="webhook", address=lambda reader: f"{base_url}/hook/{reader.id}",
        render=render_hook,
        composer=lambda rendering, context: lambda reader, message_id: {**rendering.payload, "reader": reader.id},
        outbox_file=lambda message: (f"{message.reader.id}.webhook.json", json.dumps(message.payload).encode()),
        channel=lambda settings: HookChannel(),
    )


@pytest.fixture
def hook():
    with HookServer() as server:
        register_medium(hook_medium(server.url))
        try:
            yield server
        finally:
            unregister_medium("webhook")


def _pipeline(tmp_path: Path, deliver: str) -> EditionPipeline:
    options = RunOptions(source="sample", out=str(tmp_path / "out"), deliver=deliver, language="en",
                         state=str(tmp_path / "state.sqlite"))
    return EditionPipeline(build_services(options, load_settings(**options.settings_overrides()), default_media()))


def _run(pipeline: EditionPipeline):
    try:
        return pipeline.run()
    finally:
        pipeline.services.close()


@pytest.mark.slow  # among the slowest (pytest --durations)
def test_a_registered_medium_is_rendered_and_delivered_exactly_once_through_the_ledger(hook, tmp_path: Path) -> None:
    summary = _run(_pipeline(tmp_path, "webhook"))
    readers = {r for ids in summary.variants.values() for r in ids}
    assert {path for path, _ in hook.posts} == {f"/hook/{r}" for r in readers}
    assert len(hook.posts) == len(readers) == len(summary.sent)
    for path, body in hook.posts:
        reader = path.rsplit("/", 1)[1]
        variant = next(k for k, ids in summary.variants.items() if reader in ids)
        written = json.loads((tmp_path / "out" / "webhook" / f"{variant}.json").read_text(encoding="utf-8"))
        assert body == {**written, "reader": reader}
        assert body["entries"], "a reader whose filter selects nothing gets no message"
    # the shipped media still render their files, and are not delivered (not asked for)
    assert list((tmp_path / "out" / "email").glob("*.html")) and not (tmp_path / "out" / "outbox").exists()

    again = _run(_pipeline(tmp_path, "webhook"))  # a re-run of the edition: the ledger holds every row as sent
    assert len(hook.posts) == len(readers) and not again.sent and "already delivered" in again.skipped


def test_the_outbox_writes_the_registered_medium_beside_email_and_slack(hook, tmp_path: Path) -> None:
    summary = _run(_pipeline(tmp_path, "outbox"))
    outbox = tmp_path / "out" / "outbox"
    hooks = sorted(p.name for p in outbox.glob("*.webhook.json"))
    assert hooks and len(hooks) == len({r for ids in summary.variants.values() for r in ids})
    assert list(outbox.glob("*.eml")) and not hook.posts


def test_deliver_names_only_registered_transports(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"--deliver 'webhook': use 'outbox' or any of 'smtp,slack,feishu'"):
        _pipeline(tmp_path, "webhook")


def test_a_medium_name_or_transport_is_registered_once() -> None:
    registry = default_media()
    with pytest.raises(ValueError, match="already registered"):
        registry.register(registry["email"])
    assert MediaRegistry([]).for_deliver("outbox") == []


@pytest.mark.prefect
@pytest.mark.slow
def test_the_edition_flow_delivers_a_registered_medium_unchanged(prefect_api, hook, tmp_path: Path) -> None:
    from flows.edition import digest_edition

    summary = digest_edition(source="sample", out=str(tmp_path / "out"), deliver="webhook", language="en",
                             state=str(tmp_path / "state.sqlite"))
    assert len(hook.posts) == len(summary.sent) > 0
    assert {m for _, m, _ in summary.sent} == {"webhook"}


def _installed_plugin(folder: Path, monkeypatch) -> Path:
    """An installed distribution (a dist-info folder on sys.path) declaring a ``beacon`` medium; importing
    its module leaves a mark, so a test sees whether it was loaded at all."""
    import importlib

    mark = folder / "imported.txt"
    (folder / "beacon_plugin.py").write_text(
        "from pathlib import Path\n"
        f"Path({str(mark)!r}).write_text('imported')\n"
        "import dataclasses\nfrom tests.test_media import hook_medium\n"
        "MEDIUM = dataclasses.replace(hook_medium('http://127.0.0.1:9'), name='beacon', transport='beacon')\n",
        encoding="utf-8")
    install_distribution(folder, "beacon-plugin", {"pr_digest.media": {"beacon": "beacon_plugin:MEDIUM"}})
    monkeypatch.syspath_prepend(str(folder))
    importlib.invalidate_caches()
    return mark


def test_an_installed_plugin_is_imported_and_rendered_only_when_the_run_names_it(tmp_path: Path, monkeypatch) -> None:
    import sys

    mark = _installed_plugin(tmp_path, monkeypatch)
    for deliver in ("outbox", "smtp", "smtp,slack"):
        assert "beacon" not in default_media(deliver).names(), deliver
    assert not mark.exists() and "beacon_plugin" not in sys.modules  # no code of it ran
    assert "beacon" in default_media("smtp,beacon").names() and mark.exists()
    monkeypatch.delitem(sys.modules, "beacon_plugin")
