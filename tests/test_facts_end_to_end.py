"""Code facts end to end: a real repository's week (tests/git_support.py) read by the facts engine, drafted
offline, reviewed and rendered: the follower of the changed subsystem is told what to act on, in Chinese, with
names as code; the reader of another subsystem is not; the editor's ``nobreak`` takes an entry out."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from prdigest.collect.facts import week_facts
from prdigest.collect.git import open_clone
from prdigest.connect.variants import plan_variants
from prdigest.draft.language import mixes_languages
from prdigest.draft.offline import OfflineDrafter
from prdigest.kernel.actions import actions
from prdigest.kernel.models import Edition, Entry, EntryStatus
from prdigest.publish.screenshot import chromium, screenshot
from prdigest.readers.file import Reader
from prdigest.review import apply_decision, parse_changes
from prdigest.review.decision import ReviewDecision
from renderers import render_email, render_text
from tests.factories import WEEK
from tests.git_support import Upstream, build_upstream
from tests.test_facts_week import SURFACE

ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
READERS = [Reader(id="layers", name="Layers", email="layers@example.com", subsystems=("layers",)),
           Reader(id="docs", name="Docs", email="docs@example.com", subsystems=("documentation",))]


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Upstream:
    return build_upstream(tmp_path_factory.mktemp("week"))


def _edition(upstream: Upstream, state: Path) -> Edition:
    week = week_facts(upstream.prs, surface=SURFACE, clone=open_clone(upstream.url, state_dir=state))
    drafter = OfflineDrafter()
    entries = []
    for pr in upstream.prs:
        pr = pr.model_copy(update={"changes": week.changes[pr.number]})  # attached before drafting
        subsystems = ["documentation"] if all(f.path.startswith("docs/") for f in pr.files) else ["layers"]
        entry = Entry.from_draft(pr, subsystems, drafter.draft(pr, subsystems, "zh-CN")).model_copy(
            update={"action": actions(pr.changes, "zh-CN")})  # as the draft step makes them
        entries.append(entry.model_copy(update={"status": EntryStatus.APPROVED}))
    return Edition(repo="acme/pkg", since=WEEK, until=WEEK.replace(day=23), language="zh-CN", generated_at=WEEK,
                   entries=entries, ranking=[e.number for e in entries])


def test_the_follower_is_told_what_to_act_on_and_the_other_reader_is_not(upstream: Upstream, tmp_path: Path) -> None:
    edition = _edition(upstream, tmp_path)
    marked = {e.number for e in edition.entries if e.breaking}
    assert marked == {101, 102, 103, 104, 105}  # rename, moves, a removed env var, a re-signed op, a removal
    by_reader = {v.readers[0].id: v for v in plan_variants(edition, READERS)[0]}
    text = render_text(edition, by_reader["layers"])
    block = text[text.index("需要处理"):text.index("先读这些")]
    assert "在使用处将 `old_name` 改名为 `new_name`。" in block and "不再设置环境变量 `PKG_OLD_FLAG`：它已被移除。" in block
    assert "需要处理" not in render_text(edition, by_reader["docs"])
    # The rename's headline is Chinese composed from its facts, in one language.
    rename = next(e for e in edition.entries if e.number == 101)
    assert "`" in rename.headline and not mixes_languages(rename.headline), rename.headline
    # The editor clears one mark: it leaves the block, the others stay.
    fields, errors = parse_changes("nobreak 103")
    assert not errors
    reviewed = apply_decision(edition.model_copy(update={"entries": [e.model_copy(update={"status": EntryStatus.DRAFT})
                                                                      for e in edition.entries]}),
                              ReviewDecision(decision="send", approver="ed", **fields))  # type: ignore[arg-type]
    variant = {v.readers[0].id: v for v in plan_variants(reviewed, READERS)[0]}["layers"]
    after = render_text(reviewed, variant)
    assert "PKG_OLD_FLAG" not in after[after.index("需要处理"):after.index("先读这些")]


@pytest.mark.browser
@pytest.mark.skipif(chromium() is None, reason="Chromium is not installed")
def test_the_email_with_action_required_as_a_reader_sees_it(upstream: Upstream, tmp_path: Path) -> None:
    edition = _edition(upstream, tmp_path / "state")
    variant = {v.readers[0].id: v for v in plan_variants(edition, READERS)[0]}["layers"]
    html = tmp_path / "layers.html"
    html.write_text(render_email(edition, variant).html, encoding="utf-8")
    shot = screenshot(html, tmp_path / "email-action-600.png", width=600, height=1800)
    assert shot.stat().st_size > 40_000  # a blank page compresses to a few KB
    ARTIFACTS.mkdir(exist_ok=True)
    shutil.copy(shot, ARTIFACTS / shot.name)


def test_a_whole_run_with_git_tells_the_core_reader_only(upstream: Upstream, tmp_path: Path) -> None:
    import json

    from flows.media import default_media
    from prdigest.kernel.config import load_settings
    from prdigest.pipeline.compose import RunOptions, build_services
    from prdigest.pipeline.edition import EditionPipeline
    from tests.test_facts_run import RULES

    week = tmp_path / "week.jsonl"
    week.write_text("".join(pr.model_dump_json(exclude={"changes", "facts_source"}) + "\n" for pr in upstream.prs))
    (tmp_path / "rules.yaml").write_text(RULES)
    (tmp_path / "readers.yaml").write_text(
        "readers:\n  - id: core-team\n    name: Core\n    email: core@example.com\n    subsystems: [core]\n"
        "  - id: docs-team\n    name: Docs\n    email: docs@example.com\n    subsystems: [docs]\n")
    out = tmp_path / "out"
    options = RunOptions(source=f"jsonl:{week}", out=str(out), rules=str(tmp_path / "rules.yaml"),
                         readers=str(tmp_path / "readers.yaml"), language="zh-CN", git=upstream.url,
                         state=str(tmp_path / "state.sqlite"), since="2026-11-16", until="2026-11-23")
    services = build_services(options, load_settings(**options.settings_overrides()), default_media())
    try:
        EditionPipeline(services).run()
    finally:
        services.close()
    digest = json.loads((out / "digest.json").read_text())
    keys = {v["readers"][0]: v["key"] for v in digest["variants"]}
    core = (out / "email" / f"{keys['core-team']}.html").read_text()
    docs = (out / "email" / f"{keys['docs-team']}.html").read_text()
    assert "需要处理" in core and "<code>old_name</code>" in core and "<code>PKG_OLD_FLAG</code>" in core
    assert core.index("需要处理") < core.index('<div class="e"')  # before the entries
    assert "需要处理" not in docs
    heads = {e["number"]: e["headline"] for e in digest["entries"]}
    said = heads[101].split("：", 1)[-1]  # after the subsystem's label, which the rules file names ("core")
    assert "`" in said and not mixes_languages(said), heads[101]
