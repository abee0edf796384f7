"""Publishing the archive: record an edition in the history, rebuild the site, write it under ``DIR/site/``.

Not a pure renderer (it writes files and the state store) but it must see both the history (core) and
the site renderer, which the core may not import: the flow's record step and ``digest site`` call it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from prdigest.kernel.errors import ConfigError
from prdigest.state.history import editions, record_edition
from prdigest.kernel.models import Edition
from prdigest.pipeline.edition import write_tree
from prdigest.state.store import StateLocation, Store, state_store
from prdigest.kernel.vocabulary import Vocabulary
from renderers.escape import DEFAULT_LINK_HOSTS
from renderers.site import build_site, site_base


@dataclass(frozen=True)
class PublishedSite:
    """What :func:`publish_site` wrote."""

    root: Path
    editions: int
    files: int
    bytes: int


def write_site(files: dict[str, bytes], site_dir: Path) -> int:
    """Make ``site_dir`` exactly the build (:func:`prdigest.pipeline.edition.write_tree`: atomic per file, unchanged files
    untouched, files no build produces any more removed). Returns the bytes of the site."""
    write_tree(site_dir, files)
    return sum(len(data) for data in files.values())


def _location(value: str | os.PathLike[str]) -> StateLocation:
    try:
        return StateLocation.parse(value)
    except ValueError as exc:
        raise ConfigError(f"--state / $DIGEST_STATE: {exc}") from None


def publish_site(state: Store | StateLocation | str | os.PathLike[str], out_dir: Path,
                 site_url: str | None = None, *,
                 edition: Edition | None = None, link_hosts: tuple[str, ...] = DEFAULT_LINK_HOSTS,
                 repo: str | None = None, vocabularies: Mapping[str, Vocabulary] | None = None,
                 impact: bool = False) -> PublishedSite:
    """Record ``edition`` (when given) in the history, then write the archive of every stored edition
    (of ``repo`` only, when given) to ``out_dir/site/``. Idempotent: publishing the same edition again
    replaces it and rewrites only the files that changed. ``vocabularies`` (by repo) label subsystems.

    ``state`` is an open store, or where one is (``--state``: opened and closed here).
    """
    site_base(site_url)  # a bad URL stops here, before anything is recorded or written
    if not isinstance(state, Store):
        where = StateLocation.parse(state) if isinstance(state, StateLocation) else _location(state)
        if edition is None and not where.exists():
            # Opening would create an empty database, and an empty archive pushed over the public one wipes it.
            raise ConfigError(f"state {where}: no such file; give the state the runs wrote (--state / "
                              "$DIGEST_STATE): nothing was created or written")
        with state_store(where) as store:
            return publish_site(store(), out_dir, site_url, edition=edition, link_hosts=link_hosts, repo=repo,
                                vocabularies=vocabularies, impact=impact)
    if edition is not None:
        record_edition(state, edition)
    stored = editions(state, repo)
    if not stored:
        which = f" of {repo}" if repo else ""
        raise ConfigError(f"state {state.location}: no edition{which} in it; refusing to write an empty archive "
                          f"over {out_dir / 'site'} (is --state / $DIGEST_STATE the one the runs wrote?)")
    files = build_site(stored, site_url=site_url, link_hosts=link_hosts, vocabularies=vocabularies, impact=impact)
    root = out_dir / "site"
    size = write_site(files, root)
    return PublishedSite(root=root, editions=len(stored), files=len(files), bytes=size)
