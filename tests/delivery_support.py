"""Builders for delivery tests: an edition's variants rendered by the shipped media, planned deliveries,
and the sample week drafted through the core pipeline."""

from __future__ import annotations

import tempfile
from collections.abc import Iterable

from flows.media import default_media
from prdigest.connect.variants import plan_variants
from prdigest.deliver.media import ComposeContext, MediaRegistry, RenderContext, Rendering
from prdigest.deliver.run import Delivery, plan_deliveries
from prdigest.kernel.config import Settings
from prdigest.kernel.models import Edition
from prdigest.pipeline.compose import RunOptions, build_services
from prdigest.pipeline.edition import EditionPipeline, auto_approve
from prdigest.readers.file import Reader

Variants = list[tuple[list[Reader], dict[str, Rendering]]]


def rendered_variants(edition: Edition, readers: list[Reader], media: MediaRegistry | None = None,
                      link_hosts: tuple[str, ...] = ("github.com",)) -> Variants:
    """The ``variants`` argument of :func:`plan_deliveries`: each variant's readers and its rendering per
    medium (every medium of ``media``, the shipped ones by default), as the pipeline's render step makes them."""
    media = media if media is not None else default_media()
    variants, _idle = plan_variants(edition, readers)
    context = RenderContext(link_hosts=link_hosts)
    return [(v.readers, {m.name: m.render(edition, v, context) for m in media}) for v in variants]


def planned(edition: Edition, readers: list[Reader], media: Iterable[str] = ("email", "slack"), *,
            sender: str = "pr-digest <digest@example.com>", unsubscribe: str | None = None) -> list[Delivery]:
    """The deliveries of ``readers`` on the named shipped media, not yet composed."""
    registry = default_media()
    context = ComposeContext(edition=edition, sender=sender, unsubscribe_template=unsubscribe)
    wanted = [registry[name] for name in registry.names() if name in set(media)]
    return plan_deliveries(rendered_variants(edition, readers, registry), wanted, context)


def sample_edition(language: str = "zh-CN") -> Edition:
    """The shipped sample week, collected and drafted offline through the core pipeline, auto-approved."""
    with tempfile.TemporaryDirectory() as out:
        services = build_services(RunOptions(out=out, language=language), Settings(state=f"{out}/state.sqlite"),
                                  default_media())
        try:
            pipeline = EditionPipeline(services)
            collected = pipeline.collect()
            return auto_approve(pipeline.new_edition(collected, pipeline.draft(collected.prs)))
        finally:
            services.close()


SENDER = "pr-digest <digest@example.com>"


def race_readers(n: int) -> list[Reader]:
    """``n`` readers, each with an address and a Slack channel of their own (``#c<i>`` → ``C<i>``)."""
    return [Reader(id=f"r{i:04d}", name=f"Reader {i}", email=f"r{i:04d}@example.com", slack=f"#c{i:04d}")
            for i in range(n)]


def race_channels(n: int) -> dict[str, str]:
    """The local Slack server's channels for :func:`race_readers` (name → ID)."""
    return {f"c{i:04d}": f"C{i:07d}" for i in range(n)}


def race_edition() -> Edition:
    """A small English edition every racing process builds identically (same repo and window)."""
    from tests.factories import edition, entry

    subs = [["moe"], ["kernels"], ["docs"]]
    return edition([entry(100 + i, subs[i % 3], ("deep-read", "skim", "skip")[i % 3]) for i in range(4)],
                   language="en")
