"""What comes from outside the process is checked where it is read (issue 37: the types say what the code
guarantees): a GitHub search hit without ``updated_at`` and a cached impact-index row with an unknown use are
clear errors naming the PR or the row, never a half-built record."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from prdigest.collect.github.search import Hit
from prdigest.connect.impact.index import Use
from prdigest.kernel.errors import SourceError

ITEM = {"number": 41873, "html_url": "https://github.com/vllm-project/vllm/pull/41873", "title": "Fix MoE",
        "body": "", "user": None, "labels": [{"name": "bug"}], "created_at": "2026-05-01T10:00:00Z",
        "updated_at": "2026-05-03T09:00:00Z", "comments": 2,
        "pull_request": {"merged_at": "2026-05-02T12:00:00Z"}}


def test_a_search_hit_reads_its_times_and_an_account_without_login() -> None:
    hit = Hit.from_item(ITEM)
    assert hit is not None
    assert hit.merged_at == datetime(2026, 5, 2, 12, tzinfo=timezone.utc)
    assert hit.updated_at == datetime(2026, 5, 3, 9, tzinfo=timezone.utc)
    assert hit.author is None and hit.labels == ("bug",) and hit.comments == 2


def test_a_search_hit_that_is_not_merged_is_none() -> None:
    assert Hit.from_item({**ITEM, "pull_request": {"merged_at": None}}) is None


@pytest.mark.parametrize("updated", [None, ""])
def test_a_merged_search_hit_without_updated_at_names_the_pr(updated: str | None) -> None:
    with pytest.raises(SourceError, match=r"#41873: no updated_at"):
        Hit.from_item({**ITEM, "updated_at": updated})
    with pytest.raises(SourceError, match=r"#41873: no updated_at"):
        Hit.from_item({k: v for k, v in ITEM.items() if k != "updated_at"})


def test_an_index_row_round_trips() -> None:
    use = Use("ds/ops/fused_moe.py", 12, "vllm.model_executor.layers.fused_moe.FusedMoE.forward", "overrides",
              "self,x,dtype=", "FusedMoE", "Ascend.forward")
    assert Use.from_row(use.row()) == use


def test_an_index_row_with_an_unknown_use_names_the_row() -> None:
    row = ["ds/ops/fused_moe.py", 12, "vllm.x.f", "monkeypatches", "", "", ""]
    with pytest.raises(ValueError, match=r"ds/ops/fused_moe.py:12: unknown use 'monkeypatches'"):
        Use.from_row(row)
