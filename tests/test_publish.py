"""Publishing is one function (prdigest.publish.site.publish): a run's publish step and ``digest site`` write the
same archive from the same state, and recording an edition outside a run updates its record as a run does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli import app
from prdigest.connect import followups
from prdigest.state import record as records
from prdigest.state.store import open_store
from tests.factories import edition, entry, publish_site
from tests.proposal_support import KETTLE

SITE = "https://digest.example.com/vllm/"


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# The shipped week (vLLM's rules show subsystem names) and a repo without rules, whose proposed subsystems are
# kept in the state store and shown by their labels ("module:ops"): digest site must label them as the run did.
@pytest.mark.parametrize("source", ["sample", f"jsonl:{KETTLE / 'prs.jsonl'}"], ids=["vllm", "proposed-rules"])
def test_digest_site_writes_exactly_the_archive_the_run_published(tmp_path: Path, source: str) -> None:
    state, run_out, cli_out = tmp_path / "state.sqlite", tmp_path / "run", tmp_path / "cli"
    run = CliRunner().invoke(app, ["run", "--source", source, "--state", str(state), "--out", str(run_out),
                                   "--site-url", SITE])
    assert run.exit_code == 0, run.output
    repo = json.loads((run_out / "digest.json").read_text(encoding="utf-8"))["repo"]
    for flags in ([], ["--repo", repo]):
        site = CliRunner().invoke(app, ["site", "--state", str(state), "--out", str(cli_out), "--site-url", SITE,
                                        *flags])
        assert site.exit_code == 0, site.output
        published, rebuilt = _files(run_out / "site"), _files(cli_out / "site")
        assert published and sorted(published) == sorted(rebuilt)
        differ = [path for path in published if published[path] != rebuilt[path]]
        assert not differ, f"digest site {' '.join(flags)} rewrote {differ[:5]} differently from the run"


def test_an_edition_published_outside_a_run_tracks_its_followups_as_a_run_does(tmp_path: Path) -> None:
    ed = edition([entry(7, ["kernels"], "deep-read").model_copy(update={"followups": ["port it to ROCm"]})])
    with open_store(tmp_path / "state.sqlite") as store:
        result = publish_site(store, tmp_path / "out", SITE, edition=ed)
        assert result.editions == 1 and (tmp_path / "out/site/index.html").is_file()
        stored = records.load(store, ed.id)
        assert stored is not None and stored.status is records.Status.PUBLISHED
        assert [item.text for item in followups.open_items(store, ed.repo, ed.until, 6)] == ["port it to ROCm"]
