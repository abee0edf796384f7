"""The evaluation reports: hostile PR and model text in the worst disagreements stays inert in HTML and
markdown; eval.json reads back for ``--compare``."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from html.parser import HTMLParser
from pathlib import Path

from prdigest.evaluation.comparison import write_comparison
from prdigest.evaluation.report import write_reports
from prdigest.evaluation.results import EvalRow, EvalRun, RunInfo, load_run
from prdigest.kernel.models import Verdict

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.hrefs += [v or "" for k, v in attrs if k == "href"]
        assert not [k for k, _ in attrs if k.startswith("on")], attrs


def hostile_run() -> EvalRun:
    info = RunInfo(drafter="openai:m<b>", model="m<b>", prompt_version="1</title>", language="en", repo="o/r",
                   gold="gold.jsonl", gold_sha256="a" * 64, started_at=datetime(2026, 11, 30, tzinfo=timezone.utc))
    rows = [
        EvalRow(number=1, url="javascript:alert(1)", title=f"Title {HOSTILE}", gold_verdict=Verdict.DEEP_READ,
                gold_subsystems=["kernels"], gold_why=f"why {HOSTILE}", verdict=Verdict.SKIP,
                subsystems=["<b>docs</b>"], headline=f"Headline {HOSTILE}",
                rationale=f"[click](javascript:x) {HOSTILE}",
                focus=[f"`a.py` {HOSTILE}"], drafter="openai:m", grounding=[f"`{HOSTILE}`"]),
        EvalRow(number=2, url="https://github.com/o/r/pull/2", title="Fine", gold_verdict=Verdict.SKIM,
                gold_subsystems=["docs"], verdict=Verdict.DEEP_READ, subsystems=["docs"], headline="ok",
                rationale="ok", drafter="openai:m"),
    ]
    return EvalRun(info=info, rows=rows)


def test_hostile_text_in_the_worst_disagreements_is_escaped_in_html(tmp_path: Path) -> None:
    write_reports(hostile_run(), tmp_path)
    page = (tmp_path / "eval.html").read_text(encoding="utf-8")
    assert "<script" not in page and "<img" not in page and "<b>docs" not in page
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in page  # shown as text, for the reader
    assert "Headline &lt;script&gt;" in page and "why &lt;script&gt;" in page
    parser = _Collect()
    parser.feed(page)
    assert set(parser.tags) <= {"html", "head", "meta", "title", "style", "body", "h1", "h2", "p", "table", "tr",
                                "th", "td", "div", "span", "br", "b", "ol", "li", "a", "code"}
    assert "<li><code>a.py</code> &lt;script&gt;" in page  # code spans shown as code, the rest as text
    assert parser.hrefs == ["https://github.com/o/r/pull/2"]  # no javascript: link from a PR's URL


def test_hostile_text_is_inert_in_markdown(tmp_path: Path) -> None:
    write_reports(hostile_run(), tmp_path)
    text = (tmp_path / "eval.md").read_text(encoding="utf-8")
    assert "<script>" not in text and "\\<script\\>" in text
    assert "[click](javascript" not in text and "\\[click\\]" in text


def test_eval_json_reads_back_and_compares_with_itself(tmp_path: Path) -> None:
    run = hostile_run()
    write_reports(run, tmp_path / "a")
    data = json.loads((tmp_path / "a" / "eval.json").read_text(encoding="utf-8"))
    assert data["n"] == 2 and data["verdict_agreement"] == 0.0 and data["worst_disagreements"] == [1, 2]
    back = load_run(tmp_path / "a")
    assert back.rows == run.rows and back.info == run.info
    result, paths = write_comparison(back, run, tmp_path / "ab")
    assert result.differences == [] and result.tests[0].verdict.startswith("too few to tell")
    page = paths[2].read_text(encoding="utf-8")
    assert "<script" not in page and "m&lt;b&gt;" in page
