"""The render step's memory is flat in readers (issue 38): what one variant's renderings share between its
media is kept only while that variant is rendered, and the renderings are the same bytes as made alone."""

from __future__ import annotations

import gc
import random
from pathlib import Path

from flows.media import default_media
from prdigest.connect.variants import plan_variants
from prdigest.deliver.media import RenderContext
from prdigest.deliver.rendered import render_context, render_variants
from prdigest.kernel.config import load_settings
from prdigest.kernel.models import EarlierFollowup, Edition, EntryStatus, Story, Verdict
from prdigest.readers.file import Reader
from renderers.relation_lines import Connections
from tests.factories import edition, entry

SUBSYSTEMS = ["attention", "ci-build", "docs", "kernels", "moe", "tpu"]
VERDICTS = ["skip", "skim", "deep-read"]


def _approved(rng: random.Random, n: int = 30) -> Edition:
    entries = [entry(i, rng.sample(SUBSYSTEMS, rng.choice((1, 1, 2))), rng.choice(VERDICTS),
                     status=EntryStatus.APPROVED.value) for i in range(1, n + 1)]
    ed = edition(entries, language="en")
    return ed.model_copy(update={
        "ranking": [e.number for e in entries if e.verdict is Verdict.DEEP_READ],
        "stories": [Story(title="A story over three PRs", numbers=[2, 5, 9])],
        "earlier_followups": [EarlierFollowup(from_number=1, from_edition="2026-W01", text="benchmark it",
                                              status="open", subsystems=["kernels"], verdict=Verdict.SKIM)]})


def _readers(rng: random.Random, n: int = 120) -> list[Reader]:
    readers = []
    for i in range(n):
        follow = rng.sample(SUBSYSTEMS, rng.choice((0, 1, 2)))
        exclude = [rng.choice([s for s in SUBSYSTEMS if s not in follow])] if rng.random() < 0.3 else []
        ways = rng.choice(({"email": f"r-{i}@example.com"}, {"slack": f"#r-{i}"},
                           {"email": f"r-{i}@example.com", "slack": f"#r-{i}"},
                           {"email": f"r-{i}@example.com", "feishu": f"group-{i}"}))
        readers.append(Reader(id=f"r-{i}", name=f"R {i}", subsystems=tuple(follow), exclude=tuple(exclude),
                              min_verdict=Verdict(rng.choice(VERDICTS)), budget=rng.choice((2, 5)), **ways))
    return readers


def test_a_variants_connections_are_kept_only_while_it_is_rendered(tmp_path: Path) -> None:
    rng = random.Random(38)
    approved, readers = _approved(rng), _readers(rng)
    variants, idle = plan_variants(approved, readers)
    assert len(variants) > 20
    context = render_context(load_settings())
    rendered = render_variants(approved, variants, idle, default_media("outbox"), context, out=tmp_path)
    assert not rendered.problems
    gc.collect()
    # One variant's connections (the last one's) stay in the step's scratch, not one per variant rendered.
    alive = sum(1 for o in gc.get_objects() if isinstance(o, Connections))
    assert alive <= 1, f"{alive} variants' connections kept after the render step ({len(variants)} variants)"


def test_renderings_sharing_the_steps_scratch_are_the_bytes_of_each_variant_rendered_alone(tmp_path: Path) -> None:
    rng = random.Random(39)
    approved, readers = _approved(rng), _readers(rng)
    variants, idle = plan_variants(approved, readers)
    media = default_media("outbox")
    context = render_context(load_settings())
    together = render_variants(approved, variants, idle, media, context, out=tmp_path / "together")
    files = {str(Path(f).relative_to(tmp_path / "together")): Path(f).read_bytes() for f in together.files}
    alone: dict[str, bytes] = {}
    for i, variant in enumerate(variants):  # a fresh scratch per variant: nothing shared between them
        own = RenderContext(context.link_hosts, context.site_url, context.reader_links)
        out = tmp_path / f"alone-{i}"
        done = render_variants(approved, [variant], [], media, own, out=out)
        alone.update({str(Path(f).relative_to(out)): Path(f).read_bytes() for f in done.files})
    assert files and files == alone


def test_variants_planned_without_a_vocabulary_share_each_entrys_pieces(tmp_path: Path) -> None:
    # plan_variants(edition, readers) with no vocabulary (a resend of an edition recorded before filters were kept,
    # scripts): every filter must share one open vocabulary, or each variant's entries are viewed anew.
    rng = random.Random(40)
    approved, readers = _approved(rng), _readers(rng)
    variants, idle = plan_variants(approved, readers)
    context = render_context(load_settings())
    render_variants(approved, variants, idle, default_media("outbox"), context, out=tmp_path)
    views = sum(1 for key in context.shared if key[0] == "view")
    assert len(variants) > 20 and 0 < views <= len(approved.entries), (views, len(variants))



def test_the_render_steps_list_of_files_written_holds_their_paths_as_text(tmp_path: Path) -> None:
    """Failed before: every file written was kept as a Path object to the run's end (~420 bytes each with its parts
    and text; ~7,300 files at 10,000 readers); now its path as text (~100 bytes), the same files."""
    import tracemalloc

    rng = random.Random(38)
    approved, readers = _approved(rng), _readers(rng)
    variants, idle = plan_variants(approved, readers)
    context = render_context(load_settings())
    tracemalloc.start()
    try:
        rendered = render_variants(approved, variants, idle, default_media("outbox"), context, out=tmp_path)
        on_disk = sorted(str(p) for p in tmp_path.rglob("*") if p.is_file())
        assert sorted(str(f) for f in rendered.files) == on_disk and len(on_disk) > 40
        gc.collect()
        held = tracemalloc.get_traced_memory()[0]
        rendered.files.clear()  # what the list alone kept alive is freed
        gc.collect()
        per_file = (held - tracemalloc.get_traced_memory()[0]) / len(on_disk)
    finally:
        tracemalloc.stop()
    assert per_file < 200, per_file
