"""docs/contracts.md says what the code does: its examples are validated by the models that read the real
files, it names every edition status in order, and nothing in the repository cites a design file it does
not contain."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from prdigest.classify.rulesfile import load_rules
from prdigest.classify.subsystems import classifier_for
from prdigest.collect.sources import read_jsonl
from prdigest.readers.file import load_readers

ROOT = Path(__file__).resolve().parents[1]
CONTRACTS = ROOT / "docs" / "contracts.md"
#: Folders of ours that hold text a user's clone carries.
OURS = ("prdigest", "flows", "renderers", "prompts", "tests", "benchmarks", "docs", "scripts")
#: Files that hold a citation only to check that the product never makes it.
CHECKERS = {"../shared": {"tests/test_architecture.py"}}


def _block(after_heading: str, language: str) -> str:
    """The first ``language`` code block under the heading that starts with ``after_heading``."""
    text = CONTRACTS.read_text(encoding="utf-8")
    section = text[text.index(f"## {after_heading}"):]
    return re.search(rf"```{language}\n(.*?)```", section, re.S).group(1)  # type: ignore[union-attr]


def test_the_source_example_is_a_valid_source_line(tmp_path: Path) -> None:
    path = tmp_path / "prs.jsonl"
    path.write_text(_block("Source JSONL", "json"), encoding="utf-8")
    [pr] = read_jsonl(path)
    assert pr.number == 41873 and pr.files[0].path == "csrc/moe/fused_moe.cu" and pr.review_comments[0].author == "kim"


def test_the_readers_example_is_a_valid_readers_file_for_the_vllm_rules(tmp_path: Path) -> None:
    path = tmp_path / "readers.yaml"
    path.write_text(_block("Readers file", "yaml"), encoding="utf-8")
    readers = load_readers(path, classifier_for("vllm-project/vllm").known_subsystems)
    assert [r.id for r in readers.readers] == ["kernels-team"] and readers.editors[0].name == "Lin"


def test_the_rules_example_is_a_valid_rules_file(tmp_path: Path) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text(_block("Rules file", "yaml"), encoding="utf-8")
    assert list(load_rules(path).names) == ["kernels", "docs", "other"]


def test_the_edition_statuses_are_listed_in_their_order() -> None:
    text = CONTRACTS.read_text(encoding="utf-8")
    assert "collected → drafted → in_review → approved → published → delivering → delivered" in text
    assert "- `held`" in text and "- `partial`" in text


@pytest.mark.parametrize("cited", ["DESIGN.md", "../shared", "shared/fixtures"])
def test_nothing_in_the_repository_cites_a_file_it_does_not_contain(cited: str) -> None:
    me = Path(__file__).resolve()
    offenders = []
    for folder in OURS:
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in {".py", ".md", ".yaml", ".yml", ".j2", ".html", ".toml", ".txt", ""} and path.is_file() \
                    and path.resolve() != me and "__pycache__" not in path.parts:
                relative = str(path.relative_to(ROOT))
                if cited in path.read_text(encoding="utf-8", errors="replace") and relative not in CHECKERS.get(cited, ()):
                    offenders.append(relative)
    for top in ("README.md", "BENCHMARKS.md", "pyproject.toml", "prefect.yaml"):
        if cited in (ROOT / top).read_text(encoding="utf-8"):
            offenders.append(top)
    assert offenders == []


def test_the_digest_json_table_names_every_top_level_key_and_no_other() -> None:
    from prdigest.kernel.models import Edition

    text = CONTRACTS.read_text(encoding="utf-8")
    table = text[text.index("## `digest.json`"):text.index("## The edition record")]
    named = {key for row in re.findall(r"^\| ([^|]+) \|", table, re.M) for key in re.findall(r"`(\w+)", row)}
    written = set(Edition.model_fields) | set(Edition.model_computed_fields) | {"name", "week", "key"}
    assert named == written
