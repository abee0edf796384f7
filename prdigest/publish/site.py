"""Publishing: one function for the run, the flow and ``digest site``.

An edition is published in one place, :func:`publish`: its record moves to ``published`` with the history
index (compare and set against the approved record the run read), its follow-ups are tracked, and the archive
of every stored edition (of one repo, when asked) is written to ``DIR/site/``. The run's publish step
(:meth:`prdigest.pipeline.edition.EditionPipeline.publish`, which the Prefect flow's task calls) and
``digest site`` (which records nothing: it rebuilds) both call it, so they write the same files.

The site renderer is handed in (:class:`Archive` ``build``: :func:`renderers.site.build_site`, which the core
may not import), and so is the state store (opened by the composition root).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from prdigest.connect import followups
from prdigest.kernel.errors import ConfigError
from prdigest.kernel.models import Edition
from prdigest.kernel.storage import Store
from prdigest.kernel.vocabulary import Vocabulary
from prdigest.kernel.writes import write_tree
from prdigest.state.history import editions, record_edition
from prdigest.state.record import EditionRecord, SealKey


class SiteBuilder(Protocol):
    """Renders the archive (every stored edition, newest first) as ``{path under site/: bytes}``."""

    def __call__(self, editions: list[Edition], *, site_url: str | None, link_hosts: tuple[str, ...],
                 vocabularies: Mapping[str, Vocabulary] | None = None, impact: bool = False) -> dict[str, bytes]: ...


def _unchecked(url: str | None) -> object:
    return url


@dataclass(frozen=True)
class Archive:
    """How the archive is built: the renderer, its public URL, the hosts whose PR links stay links, each repo's
    vocabulary (subsystem labels), whether downstream impact is shown, and the URL check (the renderer's)."""

    build: SiteBuilder
    url: str | None = None
    link_hosts: tuple[str, ...] = ()
    vocabularies: Mapping[str, Vocabulary] | None = None
    impact: bool = False
    check_url: Callable[[str | None], object] = _unchecked


@dataclass(frozen=True)
class PublishedSite:
    """What :func:`publish` wrote under ``root`` (``DIR/site/``)."""

    root: Path
    editions: int
    files: int
    bytes: int
    #: Every file of the site, as written (unchanged files are left as they were).
    paths: tuple[Path, ...] = ()


@dataclass(frozen=True)
class Published:
    """One publication: the edition's record at ``published`` (None when only the site was rebuilt) and the
    site written (None when the run has no site renderer)."""

    record: EditionRecord | None
    site: PublishedSite | None


def write_site(files: dict[str, bytes], site_dir: Path) -> int:
    """Make ``site_dir`` exactly the build (:func:`prdigest.kernel.writes.write_tree`: atomic per file, unchanged files
    untouched, files no build produces any more removed). Returns the bytes of the site."""
    write_tree(site_dir, files)
    return sum(len(data) for data in files.values())


def publish(store: Store, out_dir: Path, archive: Archive | None, *, edition: Edition | None = None,
            expect: EditionRecord | None = None, seal: SealKey | None = None, followup_weeks: int = 6,
            repo: str | None = None) -> Published:
    """Publish ``edition`` (when given) and write the archive of every stored edition (of ``repo`` only, when
    given) to ``out_dir/site/``.

    The edition's record moves to ``published`` with its history index in one transaction (``expect``: the
    approved record the run read, compare and set; None replaces what is stored), sealed with ``seal``, and its
    follow-ups are tracked. Idempotent: publishing the same edition again replaces it and rewrites only the
    files that changed. A bad site URL stops it before anything is recorded or written; so does a store with
    no edition, whose empty archive would wipe the published one.
    """
    if archive is not None:
        archive.check_url(archive.url)
    record = None
    if edition is not None:
        record = record_edition(store, edition, expect=expect, seal=seal)
        followups.track(store, record.edition, max_weeks=followup_weeks)
    if archive is None:
        return Published(record, None)
    stored = editions(store, repo)
    if not stored:
        which = f" of {repo}" if repo else ""
        raise ConfigError(f"state {store.location}: no edition{which} in it; refusing to write an empty archive "
                          f"over {out_dir / 'site'} (is --state / $DIGEST_STATE the one the runs wrote?)")
    files = archive.build(stored, site_url=archive.url, link_hosts=archive.link_hosts,
                          vocabularies=archive.vocabularies, impact=archive.impact)
    root = out_dir / "site"
    paths = write_tree(root, files)
    size = sum(len(data) for data in files.values())
    return Published(record, PublishedSite(root=root, editions=len(stored), files=len(files), bytes=size,
                                           paths=tuple(paths)))
