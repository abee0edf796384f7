"""``digest site`` (rebuild the archive from the state store) and ``digest serve`` (preview it locally)."""

from __future__ import annotations

import functools
import http.server
import os
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from flows.cli.options import state_option
from flows.cli.terminal import print_error
from prdigest.kernel.errors import ConfigError, DigestError

console = Console(stderr=True, soft_wrap=True)


def site(
    state: Optional[str] = state_option("SQLite file or postgresql:// URL"),
    out: Path = typer.Option(Path("out"), "--out", help="Output folder: the site goes to OUT/site/."),
    site_url: Optional[str] = typer.Option(None, "--site-url", help="The site's public URL (absolute links in "
                                           "feeds); or $DIGEST_SITE_URL."),
    github_url: Optional[str] = typer.Option(None, "--github-url", help="GitHub API base URL, so Enterprise PR "
                                             "links stay links; or $DIGEST_GITHUB_URL."),
    repo: Optional[str] = typer.Option(None, "--repo", help="Only this OWNER/NAME's editions (default: all)."),
    impact: bool = typer.Option(False, "--impact", help="Show 'Affects your code' (the downstreams' file paths) "
                                "on the edition pages; or $DIGEST_SITE_IMPACT (off: those paths are private)."),
) -> None:
    """Rebuild the archive site (every edition in the state store) into OUT/site/."""
    from prdigest.kernel.config import load_settings
    from prdigest.pipeline.compose import command
    from prdigest.pipeline.vocabularies import stored_vocabularies
    from prdigest.publish.site import Archive, publish
    from renderers.bundle import link_hosts_for
    from renderers.site import build_site, site_base

    try:
        settings = load_settings(state=state, site_url=site_url, github_url=github_url, site_impact=impact or None)
        if not settings.state.exists():
            # Opening would create an empty database, and an empty archive pushed over the public one wipes it.
            raise ConfigError(f"state {settings.state}: no such file; give the state the runs wrote (--state / "
                              "$DIGEST_STATE): nothing was created or written")
        with command(settings) as core:
            # Each repo's subsystems labelled as its runs label them (its rules file, or the kept proposal).
            archive = Archive(build_site, settings.site_url, link_hosts_for(settings.github_url),
                              stored_vocabularies(core.store, settings, repo), settings.site_impact, site_base)
            result = publish(core.store(), out, archive, repo=repo).site
            assert result is not None  # an archive was given
    except DigestError as exc:
        print_error(exc, console)
        raise typer.Exit(2) from None
    Console().print(f"{result.editions} editions, {result.files} files ({result.bytes / 1e6:.1f} MB) in "
                    f"{result.root}/", highlight=False, soft_wrap=True)
    if not settings.site_url:
        console.print("note: no --site-url / $DIGEST_SITE_URL: feed links are relative, and emails and Slack "
                      "carry no permalinks", highlight=False)


def serve(
    folder: Path = typer.Argument(Path("out"), help="An output folder (its site/ is served) or a site folder."),
    port: int = typer.Option(8000, "--port", help="Port on 127.0.0.1 (0 picks a free one)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to listen on."),
) -> None:
    """Preview the archive over HTTP (search needs HTTP; file:// cannot load the index). Ctrl-C stops it."""
    root = folder / "site" if (folder / "site" / "index.html").is_file() else folder
    if not (root / "index.html").is_file():
        print_error(f"no index.html in {folder} or {folder / 'site'}: build the site first with "
                    "`digest site --out DIR` (or any `digest run`)", console)
        raise typer.Exit(2)
    handler = functools.partial(_Handler, directory=str(root.resolve()))
    with http.server.ThreadingHTTPServer((host, port), handler) as server:
        Console().print(f"Serving {root}/ at http://{host}:{server.server_address[1]}/ (Ctrl-C to stop)",
                        highlight=False, soft_wrap=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Static files of the site only, one line per request on stderr; JSON, Atom and scripts with their types.

    A path whose real path (symlinks followed) leaves the site is not found, and no folder is listed: the
    base class would serve ``/etc/passwd`` through a symlink and list every folder without an index.
    """

    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".json": "application/json", ".xml": "application/atom+xml", ".js": "text/javascript"}

    def send_head(self):  # the base class's untyped signature
        path = self.translate_path(self.path)
        shown = os.path.join(path, "index.html") if os.path.isdir(path) else path
        root = os.path.realpath(self.directory)
        real = os.path.realpath(shown)
        if real != root and not real.startswith(root + os.sep):
            self.send_error(404, "File not found")
            return None
        return super().send_head()

    def list_directory(self, path: str | os.PathLike[str]) -> None:
        self.send_error(404, "File not found")
        return None

    def log_message(self, format: str, *args: object) -> None:  # the base class's name
        console.print(f"{self.address_string()} {format % args}", highlight=False, markup=False)

