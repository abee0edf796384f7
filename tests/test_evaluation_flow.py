"""The evaluation flow under a Prefect API: the report files are written and published as the run's
``evaluation`` markdown artifact."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from prdigest.kernel.errors import ConfigError
from tests.conftest import SAMPLE

pytestmark = [pytest.mark.slow, pytest.mark.prefect]


def _artifact(key: str) -> str:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    async def read() -> str:
        async with get_client() as client:
            wanted = ArtifactFilter(key=ArtifactFilterKey(any_=[key]))
            found = await client.read_latest_artifacts(artifact_filter=wanted)
            return str(found[0].data) if found else ""

    return asyncio.run(read())


def test_flow_writes_the_report_and_publishes_it_as_an_artifact(prefect_api, tmp_path: Path) -> None:
    from flows.evaluation import digest_evaluation

    result = digest_evaluation(gold=str(SAMPLE), out=str(tmp_path))
    assert {Path(p).name for p in result["paths"]} == {"eval.json", "eval.md", "eval.html"}
    assert result["n"] == 58 and round(result["verdict_agreement"], 3) == 0.879
    artifact = _artifact("evaluation")
    assert "verdict agreement (as shipped) | 87.9%" in artifact and "Worst disagreements" in artifact


def test_flow_wants_exactly_one_mode(prefect_api, tmp_path: Path) -> None:
    from flows.evaluation import digest_evaluation

    with pytest.raises(ConfigError, match="exactly one of"):
        digest_evaluation(gold=str(SAMPLE), from_reviews=True, out=str(tmp_path))
