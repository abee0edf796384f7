"""The hand verdicts behind the benchmark's "by hand" precision: each names its downstream, file, upstream symbol,
function and a reason, and only a verdict "real" turns a flag the stricter evidence calls false into a true one."""

from __future__ import annotations

import json

from benchmarks.impact_downstreams import HANDCHECK, by_hand
from prdigest.kernel.models import Impact


def _impact(path: str, symbol: str) -> Impact:
    return Impact(downstream="ds", path=path, line=1, symbol=symbol, how="calls", severity="breaks", fact="x")


def test_every_hand_verdict_names_what_was_read_and_why() -> None:
    verdicts = json.loads(HANDCHECK.read_text(encoding="utf-8"))["verdicts"]
    assert verdicts
    for v in verdicts:
        # a downstream labelled over a second release pair is scored (and keyed) as "name before→after"
        assert v["downstream"].split(" ")[0] in ("vllm-ascend", "vllm-gaudi", "tpu-inference"), v
        assert v["verdict"] in ("real", "false"), v
        assert v["path"].startswith(("vllm_ascend/", "vllm_gaudi/", "tpu_inference/")), v
        assert v["symbol"].startswith("vllm."), v
        assert v["function"] and len(v["why"]) > 40, v
    assert len({(v["downstream"], v["path"], v["symbol"]) for v in verdicts}) == len(verdicts)


def test_by_hand_counts_the_stricter_evidence_and_real_verdicts_only() -> None:
    region, real, false, unread = (_impact("a.py", "vllm.A"), _impact("b.py", "vllm.B"), _impact("c.py", "vllm.C"),
                                   _impact("d.py", "vllm.D"))
    result = {"breaks": [region, real, false, unread], "region": [region]}
    verdicts = [{"downstream": "vllm-ascend", "path": "b.py", "symbol": "vllm.B", "verdict": "real"},
                {"downstream": "vllm-ascend", "path": "c.py", "symbol": "vllm.C", "verdict": "false"},
                {"downstream": "vllm-gaudi", "path": "d.py", "symbol": "vllm.D", "verdict": "real"}]
    assert by_hand("vllm-ascend", result, verdicts) == [region, real]
