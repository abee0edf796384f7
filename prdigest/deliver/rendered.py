"""Render and deliver, the one path: variants rendered once each (files written, renderings spooled), then
delivered one variant at a time from the spool.

The edition run (:meth:`prdigest.pipeline.edition.EditionPipeline.render` and ``.deliver``) and ``digest
resend`` (:mod:`prdigest.deliver.resend`) both come through here: the same contexts from the same settings,
the same media per variant, the same composers, so a resent message is rendered as the run rendered it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from prdigest.connect.variants import Variant
from prdigest.deliver.email_message import sender
from prdigest.deliver.media import ComposeContext, Medium, RenderContext, Rendering, RenderProblem, link_hosts_for
from prdigest.deliver.run import Deferred, Delivery, plan_deliveries
from prdigest.deliver.spool import Spool, Spooled
from prdigest.kernel.config import Settings
from prdigest.kernel.models import Edition, VariantRecord
from prdigest.kernel.writes import write_under
from prdigest.readers.file import Reader
from prdigest.readers.selfservice.links import link_kinds, linker

Progress = Callable[[int, int], None]


@dataclass
class RenderedVariant:
    """One variant as the render step left it: the media its readers use (the only ones it is rendered on),
    the problems rendering found, and where its renderings wait in the run's spool until its delivery reads
    them back. Each variant is rendered once; a run holds one variant's renderings as objects at a time."""

    variant: Variant
    media: list[str]
    problems: list[RenderProblem] = field(default_factory=list)
    spooled: Spooled | None = None
    spool: Spool | None = field(default=None, repr=False)
    #: The renderings as objects, when a medium's payload cannot be pickled (a plugin's): kept as they are.
    unpacked: dict[str, Rendering] | None = None

    @classmethod
    def of(cls, variant: Variant, renderings: dict[str, Rendering], spool: Spool) -> "RenderedVariant":
        """The variant's renderings put in ``spool``; their files are written by then and spooled without them
        (an e-mail's HTML and text are in its payload already: kept once, not twice)."""
        problems = [p for r in renderings.values() for p in r.problems]
        at = spool.put(renderings)
        if at is None:
            return cls(variant, list(renderings), problems, unpacked=renderings)
        return cls(variant, list(renderings), problems, at, spool)

    def renderings(self) -> dict[str, Rendering]:
        """The variant's renderings by medium name, as the render step made them (without their files)."""
        if self.unpacked is not None:
            return self.unpacked
        if self.spooled is None or self.spool is None:
            return {}
        return self.spool.get(self.spooled)


@dataclass
class Rendered:
    """The render step's result: every variant rendered (spooled), the idle readers, the files written."""

    variants: list[RenderedVariant]
    idle: list[Reader]
    #: The files written, as path text: ~100 bytes each where a Path object took ~420 (7,300 files at 10,000
    #: readers, held to the run's end).
    files: list[str] = field(default_factory=list)
    spool: Spool = field(default_factory=Spool, repr=False)

    @property
    def problems(self) -> list[RenderProblem]:
        return [p for v in self.variants for p in v.problems]


def kept_records(before: Iterable[VariantRecord], variants: Iterable[RenderedVariant]) -> list[VariantRecord]:
    """Each rendered variant's record (:meth:`Variant.record`), as the object ``before`` holds when equal to it."""
    # The render step plans the variants the review's record holds (the same when the review changed nothing):
    # a second, equal record of each (3,088 at 10,000 readers) was made and held beside the first while the
    # approved record was saved, and kept to the run's end. Equal records serialise alike, so the stored record
    # and its hash are the same either way.
    stored = {v.key: v for v in before}
    kept: list[VariantRecord] = []
    for rendered in variants:
        made = rendered.variant.record()
        same = stored.get(made.key)
        kept.append(same if same is not None and same == made else made)
    return kept


def used_media(media: Iterable[Medium], readers: Iterable[Reader]) -> list[Medium]:
    """The media some reader among ``readers`` has an address on, in the registry's order: the only ones a
    variant is rendered for (nobody would receive the others)."""
    readers = list(readers)
    return [m for m in media if any(m.address(r) for r in readers)]


def render_variant(edition: Edition, variant: Variant, media: Iterable[Medium],
                   context: RenderContext) -> dict[str, Rendering]:
    """``variant`` rendered on each of ``media``, by medium name."""
    return {m.name: m.render(edition, variant, context) for m in media}


def render_context(settings: Settings) -> RenderContext:
    """What every renderer is given, from the settings: the run's and a resend's alike (a resent thread resumed
    after its recorded parts must be rendered as it was)."""
    return RenderContext(link_hosts=link_hosts_for(settings.github_url), site_url=settings.site_url,
                         reader_links=link_kinds(settings))


def compose_context(settings: Settings, edition: Edition) -> ComposeContext:
    """What every composer is given for ``edition``: the sender and each reader's own links."""
    return ComposeContext(edition=edition, sender=sender(settings), unsubscribe_template=settings.unsubscribe_url,
                          links=linker(settings, edition.repo))


def render_variants(edition: Edition, variants: list[Variant], idle: list[Reader], media: Iterable[Medium],
                    context: RenderContext, *, out: Path | None = None,
                    progress: Progress | None = None) -> Rendered:
    """Each variant rendered once on the media its readers use; its files written inside ``out`` (None: none
    written, as for a resend) and its renderings spooled (in ``out``, unnamed) until delivery."""
    media = list(media)
    rendered = Rendered([], idle, spool=Spool(out))
    folder = None if out is None else str(out)  # path text: no Path made per file (pathlib interns their names)
    for i, variant in enumerate(variants, start=1):
        renderings = render_variant(edition, variant, used_media(media, variant.readers), context)
        if folder is not None:
            for rendering in renderings.values():
                rendered.files += [write_under(folder, rel, data) for rel, data in rendering.files.items()]
        rendered.variants.append(RenderedVariant.of(variant, renderings, rendered.spool))
        if progress is not None:
            progress(i, len(variants))
    return rendered


def planned_deliveries(rendered: Rendered, media: list[Medium], context: ComposeContext) -> list[Delivery]:
    """Every reader's delivery of the rendered variants on ``media``, not yet composed: each variant's renderings
    read back from the spool when its first message is composed, and dropped before the next variant's."""
    return plan_deliveries([(v.variant.readers, Deferred(v.variant.key, frozenset(v.media), v.renderings))
                            for v in rendered.variants], media, context)
