"""Publishing the archive: record an edition in the history, rebuild the site, write it under ``DIR/site/``.

The site renderer is handed in (``build``: :func:`renderers.site.build_site`, which the core may not import),
and so is the state store (``digest site`` opens it in the composition root); ``digest site`` and the tests
call it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from prdigest.kernel.errors import ConfigError
from prdigest.kernel.models import Edition
from prdigest.kernel.storage import Store
from prdigest.kernel.vocabulary import Vocabulary
from prdigest.kernel.writes import write_tree
from prdigest.state.history import editions, record_edition


class SiteBuilder(Protocol):
    """Renders the archive (every stored edition, newest first) as ``{path under site/: bytes}``."""

    def __call__(self, editions: list[Edition], *, site_url: str | None, link_hosts: tuple[str, ...],
                 vocabularies: Mapping[str, Vocabulary] | None = None, impact: bool = False) -> dict[str, bytes]: ...


@dataclass(frozen=True)
class PublishedSite:
    """What :func:`publish_site` wrote."""

    root: Path
    editions: int
    files: int
    bytes: int


def write_site(files: dict[str, bytes], site_dir: Path) -> int:
    """Make ``site_dir`` exactly the build (:func:`prdigest.kernel.writes.write_tree`: atomic per file, unchanged files
    untouched, files no build produces any more removed). Returns the bytes of the site."""
    write_tree(site_dir, files)
    return sum(len(data) for data in files.values())


def publish_site(state: Store, out_dir: Path, site_url: str | None, *, build: SiteBuilder,
                 check_url: Callable[[str | None], object] = lambda url: url,
                 edition: Edition | None = None, link_hosts: tuple[str, ...] = (),
                 repo: str | None = None, vocabularies: Mapping[str, Vocabulary] | None = None,
                 impact: bool = False) -> PublishedSite:
    """Record ``edition`` (when given) in the history, then write the archive of every stored edition
    (of ``repo`` only, when given) to ``out_dir/site/``. Idempotent: publishing the same edition again
    replaces it and rewrites only the files that changed. ``vocabularies`` (by repo) label subsystems.

    ``state`` is the command's store; ``build`` renders the site and ``check_url`` refuses a bad site URL
    (both the site renderer's, handed in by the shell).
    """
    check_url(site_url)  # a bad URL stops here, before anything is recorded or written
    if edition is not None:
        record_edition(state, edition)
    stored = editions(state, repo)
    if not stored:
        which = f" of {repo}" if repo else ""
        raise ConfigError(f"state {state.location}: no edition{which} in it; refusing to write an empty archive "
                          f"over {out_dir / 'site'} (is --state / $DIGEST_STATE the one the runs wrote?)")
    files = build(stored, site_url=site_url, link_hosts=link_hosts, vocabularies=vocabularies, impact=impact)
    root = out_dir / "site"
    size = write_site(files, root)
    return PublishedSite(root=root, editions=len(stored), files=len(files), bytes=size)
