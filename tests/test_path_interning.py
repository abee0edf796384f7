"""The loops that write a run's thousands of files (the renderings, the outbox, the output folder's pruning) name
them by path text, never by Path: pathlib interns every name it parses, and at 10,000 readers the churn of ~19,000
file names grew the interpreter's table of interned strings by ~2 MiB for the rest of the run (issue 38: memory
flat in readers). Counted here as the interpreter's own calls of ``sys.intern`` during each loop, over real files."""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from pathlib import Path

from flows.media import default_media
from prdigest.connect.variants import plan_variants
from prdigest.deliver.outbox import OutboxChannel
from prdigest.deliver.rendered import render_context, render_variants
from prdigest.deliver.run import deliver, outbox_routes
from prdigest.kernel.config import load_settings
from prdigest.pipeline.outfolder import prune
from prdigest.readers.file import Reader
from tests.delivery_support import SENDER, planned
from tests.factories import edition, entry
from tests.test_render_memory import _approved, _readers


def _interned(work: Callable[[], object]) -> int:
    """How many times ``sys.intern`` is called while ``work`` runs (every path pathlib parses calls it per part)."""
    calls = 0

    def profile(frame: object, event: str, arg: object) -> None:
        nonlocal calls
        if event == "c_call" and arg is sys.intern:
            calls += 1

    sys.setprofile(profile)
    try:
        work()
    finally:
        sys.setprofile(None)
    return calls


def test_the_render_step_writes_its_files_without_interning_their_names(tmp_path: Path) -> None:
    """Failed before: 3,467 names interned for 216 files written (every part of each file's Path, of its resolved Path
    and of the one returned) and pruning looked at."""
    rng = random.Random(40)
    approved, readers = _approved(rng), _readers(rng)
    variants, idle = plan_variants(approved, readers)
    media = default_media()
    out = tmp_path / "out"
    made: list = []
    calls = _interned(lambda: made.append(render_variants(approved, variants, idle, media,
                                                           render_context(load_settings()), out=out)))
    files = made[0].files
    assert len(files) > 100 and all(Path(f).is_file() for f in files)
    assert files[0] == str(out / Path(files[0]).relative_to(out))  # the text a Path gave
    assert calls < len(files) / 10, (calls, len(files))
    gone: list = []
    looked = _interned(lambda: gone.extend(prune(out, media.names(), files)))  # as the render step does
    assert not gone and looked < len(files) / 10, looked
    assert sorted(str(p) for p in prune(out, media.names(), files[::2])) == sorted(files[1::2])


def test_the_outbox_writes_its_messages_without_interning_their_names(tmp_path: Path) -> None:
    """Failed before: 3,600 names interned for 300 messages (every part of each message's Path and of its resolved
    Path and folder)."""
    ed = edition([entry(1, ["moe"], "deep-read"), entry(2, ["kernels"], "skim")], language="en")
    readers = [Reader(id=f"r{i:04d}", name=f"Reader {i}", email=f"r{i:04d}@example.com") for i in range(300)]
    outbox = OutboxChannel(tmp_path / "outbox", {m.name: m.outbox_file for m in default_media()})
    deliveries, channels = outbox_routes(planned(ed, readers, ("email",), sender=SENDER), {"email": outbox})
    made: list = []
    calls = _interned(lambda: made.append(deliver(ed.id, deliveries, channels, None)))
    assert [r.detail for r in made[0].sent] == [str(tmp_path / "outbox" / f"{r.id}.eml") for r in readers]
    assert calls < 30, calls
