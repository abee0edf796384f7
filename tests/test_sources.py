"""The JSONL source: the source format (docs/contracts.md) in, PullRequests out; malformed lines name file and line."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from prdigest.collect.sources import JsonlSource, read_jsonl, sample_week_path
from prdigest.kernel.errors import SourceError
from prdigest.kernel.window import Window

GOOD = {"number": 1, "url": "https://github.com/o/r/pull/1", "title": "t", "author": "a",
        "created_at": "2026-11-10T00:00:00Z", "merged_at": "2026-11-16T00:00:00Z", "labels": [],
        "body": "b", "files": [{"path": "x.py", "additions": 1, "deletions": 0, "status": "modified"}],
        "additions": 1, "deletions": 0, "review_comments": []}


def _write(tmp_path: Path, *records: object) -> Path:
    path = tmp_path / "prs.jsonl"
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n")
    return path


def test_sample_week_reads_all_58_prs_of_vllm() -> None:
    source = JsonlSource(sample_week_path())
    prs = source.collect(None)
    assert source.repo == "vllm-project/vllm"
    assert len(prs) == 58
    assert [p.merged_at for p in prs] == sorted(p.merged_at for p in prs)


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ("{not json", ":2: invalid JSON"),
        ("[1, 2]", ":2: expected a JSON object"),
        ({**GOOD, "number": 2, "merged_at": "yesterday"}, ":2: PR #2: field 'merged_at'"),
        ({**GOOD, "number": -5}, ":2: PR #-5: field 'number'"),
        ({k: v for k, v in GOOD.items() if k != "url"} | {"number": 3}, ":2: PR #3: field 'url': Field required"),
        ({**GOOD, "number": 4, "files": [{"path": "", "additions": 1}]}, ":2: PR #4: field 'files.0.path'"),
        ({**GOOD, "number": 5, "additions": -1}, ":2: PR #5: field 'additions'"),
        (GOOD, ":2: PR #1 already appears on line 1"),
    ],
)
def test_malformed_line_names_file_line_and_problem(tmp_path: Path, record: object, message: str) -> None:
    path = _write(tmp_path, GOOD, record)
    with pytest.raises(SourceError) as err:
        read_jsonl(path)
    assert str(path) in str(err.value)
    assert message in str(err.value)


def test_missing_file_and_binary_file_are_clear(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="cannot open source file"):
        read_jsonl(tmp_path / "nope.jsonl")
    binary = tmp_path / "bin.jsonl"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(SourceError, match="not UTF-8"):
        read_jsonl(binary)


def test_extra_keys_ignored_and_missing_author_is_ghost(tmp_path: Path) -> None:
    pr = read_jsonl(_write(tmp_path, {**GOOD, "author": None, "title": None, "gold": {"x": 1}}))[0]
    assert pr.author == "ghost" and pr.title == ""


def test_window_is_half_open(tmp_path: Path) -> None:
    at = lambda n, ts: {**GOOD, "number": n, "merged_at": ts}  # noqa: E731
    path = _write(tmp_path, at(1, "2026-11-16T00:00:00Z"), at(2, "2026-11-22T23:59:59Z"), at(3, "2026-11-23T00:00:00Z"),
                  at(4, "2026-11-15T23:59:59Z"))
    window = Window.from_flags("2026-11-16", "2026-11-23")
    assert [p.number for p in JsonlSource(path).collect(window)] == [1, 2]


def test_repo_is_inferred_or_must_be_given(tmp_path: Path) -> None:
    mixed = _write(tmp_path, GOOD, {**GOOD, "number": 2, "url": "https://github.com/x/y/pull/2"})
    with pytest.raises(SourceError, match="several repositories"):
        JsonlSource(mixed)
    assert JsonlSource(mixed, repo="o/r").repo == "o/r"


def test_default_window_covers_the_file() -> None:
    window = JsonlSource(sample_week_path()).default_window()
    assert window.since == datetime(2026, 11, 16, tzinfo=timezone.utc)
    assert window.until == datetime(2026, 11, 23, tzinfo=timezone.utc)


def test_a_jsonl_description_is_capped_at_githubs_limit_when_read(tmp_path) -> None:
    import json as _json

    from prdigest.collect.sources import read_jsonl
    from prdigest.kernel.models import MAX_BODY

    record = {"number": 1, "url": "https://github.com/o/r/pull/1", "merged_at": "2026-11-17T00:00:00Z",
              "body": "é" * (MAX_BODY + 10) + "TAIL", "review_comments": [{"author": "a", "body": "c" * 70_000}]}
    path = tmp_path / "big.jsonl"
    path.write_text(_json.dumps(record) + "\n", encoding="utf-8")
    (pr,) = read_jsonl(path)
    assert MAX_BODY == 65_536 and len(pr.body) == MAX_BODY and pr.body.endswith("é")
    assert len(pr.review_comments[0].body) == MAX_BODY
