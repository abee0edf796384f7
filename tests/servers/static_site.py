"""A folder served over HTTP on 127.0.0.1, as any static host (nginx, GitHub Pages, a bucket) would."""

from __future__ import annotations

import functools
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.servers import LoopbackServer


class _Handler(SimpleHTTPRequestHandler):
    extensions_map = {**SimpleHTTPRequestHandler.extensions_map, ".json": "application/json",
                      ".xml": "application/atom+xml", ".js": "text/javascript"}

    def log_message(self, format: str, *args: object) -> None:  # quiet in tests
        pass


class StaticSite(LoopbackServer):
    """``with StaticSite(folder) as site: site.url`` is ``http://127.0.0.1:<port>/``."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def make_httpd(self) -> ThreadingHTTPServer:
        return ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(self.root)))

    @property
    def url(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/"
