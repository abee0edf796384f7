"""``digest web``: serve readers' one-click unsubscribe and preferences pages (``flows/web/``)."""

from __future__ import annotations

import logging
from typing import Optional

import typer
from rich.console import Console

from flows.cli.options import state_option
from flows.cli.terminal import print_error
from prdigest.kernel.errors import ConfigError, DigestError

console = Console(stderr=True, soft_wrap=True)


def web(
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to listen on (behind a reverse proxy: "
                             "keep 127.0.0.1)."),
    port: int = typer.Option(8001, "--port", help="Port to listen on."),
    state: Optional[str] = state_option("the one the runs use"),
) -> None:
    """Serve readers' one-click unsubscribe (RFC 8058) and preferences pages under $DIGEST_WEB_URL, signed
    with $DIGEST_WEB_SECRET. Choices go to the state store; the next edition applies them. Ctrl-C stops it."""
    import uvicorn

    from flows.web.app import create_app
    from prdigest.kernel.config import load_settings
    from prdigest.pipeline.compose import command
    from prdigest.readers.selfservice import web_base

    try:
        settings = load_settings(state=state)
        web = web_base(settings)
        if web is None:
            raise ConfigError("digest web needs DIGEST_WEB_URL (its public URL, e.g. https://digest.example.com/"
                              "reader) and DIGEST_WEB_SECRET (the secret the runs sign links with)")
    except DigestError as exc:
        print_error(exc, console)
        raise typer.Exit(2) from None
    with command(settings) as core:  # closed when the server stops
        try:
            app = create_app(core.store(), web[1])
        except DigestError as exc:
            print_error(exc, console)
            raise typer.Exit(2) from None
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
        console.print(f"Serving reader self-service for {web[0]} on http://{host}:{port}/ (state {settings.state}; "
                      "Ctrl-C to stop)", highlight=False, markup=False)
        # No access log: every path holds a reader's token, which must not end up in log files.
        uvicorn.run(app, host=host, port=port, access_log=False, proxy_headers=True, server_header=False,
                    log_level="warning")
