"""Render and deliver as a stream (issue 38): between the render step and delivery, the variants' renderings wait in
an unnamed spool file, not in memory; delivery reads one variant back at a time."""

from __future__ import annotations

import gc
import pickle
import tracemalloc
from pathlib import Path

from flows.media import default_media
from prdigest.deliver.media import MediaRegistry, Rendering
from prdigest.deliver.spool import Spool
from prdigest.kernel.config import load_settings
from prdigest.pipeline.compose import RunOptions, build_services
from prdigest.pipeline.edition import EditionPipeline, Rendered

SUBSYSTEMS = ["kernels", "moe", "attention", "models", "frontend-api", "ci-build", "docs", "quantization"]


def _readers(path: Path) -> None:
    """Many small variants (one per reader), by e-mail and Slack."""
    lines = ["readers:"]
    for i, (a, b) in enumerate((a, b) for a in SUBSYSTEMS for b in SUBSYSTEMS if a < b):
        lines += [f"  - id: r{i:03d}", f"    name: R {i}", f"    email: r{i}@example.com", f"    slack: \"#c{i}\"",
                  f"    subsystems: [{a}, {b}]"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


class Measured(EditionPipeline):
    """The pipeline, with what its render step leaves allocated (its result included) measured: on a second
    render, the first having loaded what a process loads once."""

    retained = 0
    rendered: Rendered | None = None

    def render(self, *args, **kwargs):
        super().render(*args, **kwargs)  # templates, catalogs and compiled pieces loaded once for the process
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            rendered = super().render(*args, **kwargs)
            gc.collect()
            Measured.retained = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        Measured.rendered = rendered
        return rendered


def test_rendered_variants_wait_in_an_unnamed_spool_not_in_memory_and_every_message_goes_out(tmp_path: Path) -> None:
    _readers(tmp_path / "readers.yaml")
    out = tmp_path / "out"
    options = RunOptions(source="sample", out=str(out), language="en", readers=str(tmp_path / "readers.yaml"),
                         state=str(tmp_path / "state.sqlite"))
    pipeline = Measured(build_services(options, load_settings(**options.settings_overrides()),
                                       MediaRegistry(default_media(options.deliver))))
    try:
        summary = pipeline.run()
    finally:
        pipeline.services.close()
    rendered = Measured.rendered
    assert rendered is not None and len(rendered.variants) >= 20
    spooled = sum(v.spooled.length for v in rendered.variants if v.spooled is not None)
    assert all(v.spooled is not None and v.unpacked is None for v in rendered.variants)
    # What the render step leaves in memory is the plan and the file names, not the renderings: the packed
    # renderings alone (held until delivery before) were more than the spool's bytes.
    assert Measured.retained < spooled / 2, (Measured.retained, spooled)
    # Every message went out from the spool, and the spool left no file in the output folder.
    assert len(summary.sent) == 2 * sum(len(v.variant.readers) for v in rendered.variants) and not summary.failed
    assert sorted(p.name for p in out.iterdir()) == ["digest.json", "email", "outbox", "slack"]
    first = rendered.variants[0]
    assert set(first.renderings()) == {"email", "slack"}


def test_a_spool_gives_back_what_was_put_and_pickles_with_its_contents(tmp_path: Path, caplog) -> None:
    spool = Spool(tmp_path)
    one = {"slack": Rendering("slack", "a", [{"text": "a"}], {"slack/a.json": b"[]"})}
    two = {"email": Rendering("email", "b", "x" * 10_000)}
    at_one, at_two = spool.put(one), spool.put(two)
    assert at_one is not None and at_two is not None
    assert spool.get(at_two)["email"].payload == "x" * 10_000
    assert spool.get(at_one)["slack"].payload == [{"text": "a"}]
    assert spool.get(at_one)["slack"].files == {}  # written by the render step already: not kept twice
    assert list(tmp_path.iterdir()) == []  # unnamed
    copy = pickle.loads(pickle.dumps(spool))  # a render result persisted by Prefect keeps its renderings
    assert copy.get(at_two)["email"].payload == "x" * 10_000
    # A payload that cannot be pickled (a plugin's) is not spooled: the caller keeps it.
    with caplog.at_level("WARNING", logger="prdigest.deliver.spool"):
        assert spool.put({"x": Rendering("x", "c", lambda: None)}) is None
        assert spool.put({"x": Rendering("x", "d", lambda: None)}) is None
    (said,) = [r.getMessage() for r in caplog.records]  # once per run, naming the first variant
    assert "variant c cannot be pickled" in said
    spool.close()
    spool.close()


def test_a_zh_cn_email_without_deep_reads_is_spooled_not_kept_in_memory(tmp_path: Path) -> None:
    """Failed before the fix: its preheader was the catalog's string as it is, a ``Counted`` of the zh-CN plural
    rule, whose class pickle cannot find by name; the variant's renderings then stayed in memory until delivery
    (31 of 633 variants of the real week at 1,000 readers)."""
    from flows.media import EMAIL
    from prdigest.connect.variants import Filter, Variant, ordered
    from prdigest.deliver.media import RenderContext
    from prdigest.kernel.text import counted
    from tests.factories import edition, entry

    entries = [entry(100 + i, ["kernels"], "skim") for i in range(3)]
    ed = edition(entries, language="zh-CN")
    rendering = EMAIL.render(ed, Variant(Filter(), ordered(entries)), RenderContext())
    spool = Spool(tmp_path)
    at = spool.put({"email": rendering})
    assert at is not None
    back = spool.get(at)["email"].payload
    assert (back.subject, back.preheader, back.html) == (rendering.payload.subject, rendering.payload.preheader,
                                                         rendering.payload.html)
    word = pickle.loads(pickle.dumps(counted("{n} {n|个|个}", "none")))
    assert word.format(n=2) == "2 个" and word.rule == "none"
