"""Never a false all-clear: a downstream that cannot be read (a missing ``path:``, a ``packages:`` with no Python
file, nothing importing the upstream) is refused in one line before anything is collected or sent, in
``digest run``, ``digest impact`` and the flow; a real upstream and downstream git repository made here."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.impact_support import build_world, readers_yaml


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory):
    return build_world(tmp_path_factory.mktemp("refused"))


def _cli():
    from flows.cli import app

    return app


def _readers(world, path: Path, *, where: str | None = None, packages: str = "[ds]", upstream: str = "[vllm]") -> Path:
    readers_yaml(world, path, git_url=False)
    text = path.read_text(encoding="utf-8")
    if where is not None:
        text = text.replace(f"path: {world.downstream}", f"path: {where}")
    text = text.replace("packages: [ds]", f"packages: {packages}").replace("upstream: [vllm]", f"upstream: {upstream}")
    path.write_text(text, encoding="utf-8")
    return path


BAD = [
    pytest.param({"where": "/srv/no-such-checkout"}, "folder /srv/no-such-checkout not found", id="missing-path"),
    pytest.param({"packages": "[ds_typo]"}, "packages: 'ds_typo' has no Python file", id="typo-package"),
    pytest.param({"packages": "[ds, dss]"}, "packages: 'dss' has no Python file", id="one-typo-of-two"),
    pytest.param({"upstream": "[vlm]"}, "none of its 6 Python files imports the upstream package(s) vlm",
                 id="typo-upstream"),
]


@pytest.mark.parametrize(("change", "said"), BAD)
def test_digest_run_refuses_an_unreadable_downstream_before_anything_is_sent(world, tmp_path, change, said):
    readers = _readers(world, tmp_path / "readers.yaml", **change)
    out = tmp_path / "out"
    result = CliRunner().invoke(_cli(), ["run", "--source", f"jsonl:{world.jsonl}", "--readers", str(readers),
                                         "--git", str(world.upstream), "--out", str(out), "--language", "en",
                                         "--state", str(tmp_path / "state.sqlite")])
    assert result.exit_code != 0, result.output
    flat = " ".join(result.output.split())
    assert said in flat and f"{readers} downstreams.ascend" in flat
    assert "rather than report that nothing affects it" in flat
    assert not (out / "outbox").exists() and not (out / "digest.json").exists()  # nothing collected or sent


@pytest.mark.parametrize(("flags", "said"), [
    (["--package", "ds_typo"], "packages: 'ds_typo' has no Python file"),
    (["--package", "ds", "--upstream", "vlm"], "imports the upstream package(s) vlm"),
])
def test_digest_impact_exits_2_on_a_typo_instead_of_an_all_clear(world, tmp_path, flags, said):
    result = CliRunner().invoke(_cli(), ["impact", "--downstream", str(world.downstream), "--source",
                                         f"jsonl:{world.jsonl}", "--name", "ascend", "--language", "en",
                                         "--state", str(tmp_path / "s.sqlite"), *flags])
    assert result.exit_code == 2, result.output
    flat = " ".join(result.output.split())
    assert said in flat and "No upstream change" not in flat


def test_a_good_downstream_is_still_read(world, tmp_path):
    result = CliRunner().invoke(_cli(), ["impact", "--downstream", str(world.downstream), "--source",
                                         f"jsonl:{world.jsonl}", "--name", "ascend", "--language", "en",
                                         "--state", str(tmp_path / "s.sqlite"), "--package", "ds"])
    assert result.exit_code == 1, result.output  # something breaks it this week


def test_the_flow_refuses_it_too(world, tmp_path, prefect_api):
    from flows.edition import digest_edition
    from prdigest.kernel.errors import DownstreamError

    readers = _readers(world, tmp_path / "readers.yaml", packages="[ds_typo]")
    out = tmp_path / "out"
    with pytest.raises(DownstreamError, match="packages: 'ds_typo' has no Python file"):
        digest_edition(source=f"jsonl:{world.jsonl}", readers=str(readers), out=str(out),
                       state=str(tmp_path / "state.sqlite"), language="en")
    assert not (out / "outbox").exists()
