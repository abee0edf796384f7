"""Each reader variant gets its own read-first and lede through the whole run, in ``digest.json``; the model's
ledes and ranking are cached, so a warm re-run with the LLM drafter asks the model nothing; budgets are checked
when the readers file is loaded."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from flows.media import default_media
from prdigest.kernel.config import Settings
from prdigest.kernel.errors import ConfigError
from prdigest.pipeline.compose import RunOptions, build_services
from prdigest.pipeline.edition import EditionPipeline
from prdigest.readers.file import load_readers
from tests.conftest import SAMPLE
from tests.servers.openai_server import OpenAIServer

ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"

READERS = """\
readers:
  - id: everyone
    name: Everyone
    email: everyone@example.com
  - id: lora-watch
    name: LoRA watch
    email: lora@example.com
    subsystems: [lora]
  - id: two-areas
    name: Two areas
    email: two@example.com
    subsystems: [lora, quantization]
    budget: 2
"""


def _run(tmp_path: Path, server: OpenAIServer | None) -> dict:
    readers = tmp_path / "readers.yaml"
    readers.write_text(READERS, encoding="utf-8")
    state = tmp_path / "state.sqlite"
    options = RunOptions(source=f"jsonl:{SAMPLE}", out=str(tmp_path / "out"), state=str(state), readers=str(readers),
                         language="en", drafter="openai" if server else "offline",
                         llm_base_url=server.base_url if server else None, model="local-model" if server else None)
    settings = Settings(state=state, OPENAI_API_KEY=server.api_key if server else None,
                        llm_base_url=server.base_url if server else None, model="local-model")
    services = build_services(options, settings, default_media(), site=None)
    try:
        EditionPipeline(services).run()
    finally:
        services.close()
    return json.loads((tmp_path / "out" / "digest.json").read_text(encoding="utf-8"))


def _cited(text: str) -> set[int]:
    return {int(n) for n in re.findall(r"#(\d+)", text)}


def test_a_narrow_reader_gets_a_lede_and_read_first_of_their_own_entries(tmp_path: Path) -> None:
    digest = _run(tmp_path, None)
    variants = {v["key"]: v for v in digest["variants"]}
    assert set(variants) == {"all", "lora", "lora+quantization_first-2"}
    by_number = {e["number"]: e for e in digest["entries"]}
    for variant in variants.values():
        assert variant["read_first"] and set(variant["read_first"]) <= set(variant["numbers"])
        assert _cited(variant["lede"]) <= set(variant["numbers"]), variant["key"]
    lora = variants["lora"]
    assert all("lora" in by_number[n]["subsystems"] for n in lora["numbers"])
    assert lora["lede"] != digest["lede"] and lora["lede"].startswith(f"{len(lora['numbers'])} PR")
    assert _cited(lora["lede"]) and len(lora["read_first"]) <= 5
    assert len(variants["lora+quantization_first-2"]["read_first"]) == 2  # the reader's own budget
    assert variants["all"]["lede"] == digest["lede"] and variants["all"]["read_first"] == digest["ranking"][:5]


def test_a_warm_rerun_with_the_llm_drafter_asks_the_model_nothing(tmp_path: Path) -> None:
    with OpenAIServer(models=("local-model",)) as server:
        first = _run(tmp_path, server)
        cold = server.chat_calls
        # Drafts, the ranking, the edition's lede and one lede per narrow variant.
        assert cold >= len(first["entries"]) + 1 + 1 + 2
        lora = next(v for v in first["variants"] if v["key"] == "lora")
        assert lora["lede"].startswith("This week brings you")  # the model's lede, about the lora PRs only
        assert _cited(lora["lede"]) <= set(lora["numbers"])
        server.reset_counts()
        second = _run(tmp_path, server)
        assert server.chat_calls == 0
    assert second["variants"] == first["variants"] and second["ranking"] == first["ranking"]


@pytest.mark.parametrize(("budget", "problem"), [
    ("0", "greater than or equal to 1"), ("21", "less than or equal to 20"), ('"5"', "valid integer"),
    ("true", "valid integer"), ("2.5", "valid integer"),
])
def test_a_bad_budget_names_the_file_line_and_field(tmp_path: Path, budget: str, problem: str) -> None:
    path = tmp_path / "readers.yaml"
    path.write_text(READERS.replace("budget: 2", f"budget: {budget}"), encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_readers(path)
    message = str(caught.value)
    assert f"{path}:13:" in message and "readers.2.budget" in message and problem in message
    assert "\n" not in message


def test_the_budget_defaults_to_five(tmp_path: Path) -> None:
    path = tmp_path / "readers.yaml"
    path.write_text(READERS, encoding="utf-8")
    assert [r.budget for r in load_readers(path).readers] == [5, 5, 2]


@pytest.mark.browser
@pytest.mark.skipif(shutil.which("chromium") is None, reason="Chromium is not installed")
def test_a_narrow_readers_email_opens_with_their_lede_and_read_first_in_chromium(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from flows.cli import app

    digest = _run(tmp_path, None)
    narrow = next(v for v in digest["variants"] if v["key"] == "lora+quantization_first-2")
    html = (tmp_path / "out" / "email" / f"{narrow['key']}.html").read_text(encoding="utf-8")
    from markupsafe import escape

    lede = html.index(str(escape(narrow["lede"][:40])))
    first, entries = html.index(">Read first<"), html.index('class="g-deep-read"')
    assert lede < first < entries  # the variant's own lede and read-first come before every entry
    assert all(f">#{n}</a>" in html[first:entries] for n in narrow["read_first"])
    result = CliRunner().invoke(app, ["screenshot", str(tmp_path / "out"), "--variant", narrow["key"]])
    assert result.exit_code == 0, result.output
    shot = tmp_path / "out" / "screenshots" / f"{narrow['key']}-600.png"
    assert shot.stat().st_size > 40_000  # a rendered page, not a blank one
    ARTIFACTS.mkdir(exist_ok=True)
    shutil.copy(shot, ARTIFACTS / "email-narrow-reader-600.png")
