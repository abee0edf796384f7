"""``digest web`` served for real in tests: uvicorn in a thread on a free port of 127.0.0.1."""

from __future__ import annotations

import socket
import threading
import time

import uvicorn
from starlette.applications import Starlette


class LiveApp:
    """Serves an ASGI app with uvicorn in a daemon thread until :meth:`stop`; ``url`` is its base URL."""

    def __init__(self, app: Starlette) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        # A module's client keeps one connection alive across its tests. uvicorn closes a connection idle for
        # timeout_keep_alive (5 s by default); on a loaded machine the tests between two requests can take that
        # long, and a request sent as the server closes the connection gets "Server disconnected without sending a
        # response". The tests are about the app, not about idle connections: keep them open for the whole module.
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", timeout_keep_alive=3600)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True)

    def start(self) -> "LiveApp":
        self._thread.start()
        deadline = time.monotonic() + 60
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=30)
        self._sock.close()

    def __enter__(self) -> "LiveApp":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
