"""Local stand-ins for GitHub, OpenAI, Slack and SMTP, speaking the real wire formats on 127.0.0.1."""

from __future__ import annotations

import threading
from http.server import ThreadingHTTPServer
from typing import Any


class LoopbackServer:
    """Lifecycle shared by the HTTP stand-ins: serve one ``ThreadingHTTPServer`` in a daemon thread."""

    _httpd: ThreadingHTTPServer | None = None

    def start(self) -> Any:
        """Build the server (subclasses' :meth:`make_httpd`), serve it in a thread, return ``self``."""
        self._httpd = self.make_httpd()
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                         name=type(self).__name__, daemon=True).start()
        return self

    def make_httpd(self) -> ThreadingHTTPServer:
        raise NotImplementedError

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> Any:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
