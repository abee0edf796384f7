"""benchmarks/judgement.py measured on the shipped sample week with label files made here from its gold labels
(one as given, one with a verdict changed): each figure is what the labels and drafts say."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.judgement import (
    LIST_HEADLINE,
    WeekResult,
    from_source,
    kappa,
    main,
    measure,
    read_labels,
    upgrade_action,
)

SAMPLE = Path(__file__).resolve().parents[1] / "prdigest" / "collect" / "data" / "vllm-sample-week.jsonl"
REPO = "vllm-project/vllm"


def _labels(folder: Path) -> dict[int, str]:
    rows = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]
    gold = {r["number"]: r["gold"]["verdict"] for r in rows}
    flipped = dict(gold)
    first = sorted(gold)[0]
    flipped[first] = "skip" if gold[first] != "skip" else "deep-read"
    for who, verdicts in (("gold", gold), ("other", flipped)):
        labels = {str(n): {"verdict": v, "why": "", "action": ["upgrade torch"] if n == first else []}
                  for n, v in verdicts.items()}
        (folder / f"vllm-project-vllm-sample.{who}.json").write_text(json.dumps(
            {"labeller": who, "date": "2026-12-06", "repo": REPO, "week": "sample", "labels": labels}))
    return gold


def test_the_figures_are_what_the_labels_and_drafts_say(tmp_path: Path) -> None:
    gold = _labels(tmp_path)
    drafts = from_source(SAMPLE)
    labels = read_labels(REPO, "sample", tmp_path)
    assert set(labels) == {"gold", "other"}
    figures = measure(WeekResult("sample", drafts, labels))
    mine = figures["labellers"]["gold"]  # type: ignore[index]
    agree = sum(drafts[n].draft.verdict.value == v for n, v in gold.items()) / len(gold)
    assert mine["labelled"] == len(gold) and abs(mine["agreement"] - agree) < 1e-9
    deep = {n for n, d in drafts.items() if d.draft.verdict.value == "deep-read"}
    wanted = {n for n, v in gold.items() if v == "deep-read"}
    assert abs(mine["recall"] - len(deep & wanted) / len(wanted)) < 1e-9
    assert figures["action entries"] == sum(1 for d in drafts.values() if d.action)
    assert figures["list headlines"] == sum(bool(LIST_HEADLINE.search(d.draft.headline)) for d in drafts.values())
    between = figures["between labellers"]["gold vs other"]  # type: ignore[index]
    assert abs(between["agreement"] - (len(gold) - 1) / len(gold)) < 1e-9
    first = sorted(gold)[0]
    assert mine["labelled upgrades"] == 1 and mine["upgrades missed"] == (0 if drafts[first].action else 1)


def test_kappa_is_one_for_identical_raters_and_zero_for_chance() -> None:
    assert kappa(["a", "b", "a"], ["a", "b", "a"]) == 1.0
    assert kappa(["a", "a", "b", "b"], ["a", "b", "a", "b"]) == 0.0


def test_the_command_reports_each_labeller_and_the_ceiling(tmp_path: Path) -> None:
    _labels(tmp_path)
    text = main(["--source", str(SAMPLE), "--repo", REPO, "--weeks", "sample", "--labels", str(tmp_path)])
    assert "| sample | gold |" in text and "| sample | other |" in text and "gold vs other (ceiling)" in text
    assert "Load average:" in text


def test_a_label_with_an_unknown_verdict_names_the_file_and_pr(tmp_path: Path) -> None:
    (tmp_path / "vllm-project-vllm-sample.x.json").write_text(json.dumps(
        {"labeller": "x", "repo": REPO, "week": "sample", "labels": {"5": {"verdict": "maybe"}}}))
    try:
        read_labels(REPO, "sample", tmp_path)
    except SystemExit as exc:
        assert "vllm-project-vllm-sample.x.json" in str(exc) and "PR 5" in str(exc)
    else:
        raise AssertionError("an unknown verdict was accepted")


@pytest.mark.parametrize(("text", "upgrade"), [
    ("Upgrade CANN (and NNAL) to 8.5.0 before pulling main.", True),
    ("Install triton-ascend==3.2.0 from the package index in place of the 3.2.0.dev20260105 test build.", True),
    ("On 310P, move your environment to CANN 9.1.0-beta.1.", True),
    ("If you build main from source, check out vLLM at commit 14acf429ac08b6d538ca6feb3e06b6d13895804d.", True),
    ("On bare-metal installs, install clang (clang-15 on Ubuntu) so triton-ascend kernels can compile.", True),
    ("upgrade torch", True),
    # a word is not the meaning: a CPU pinning, a folder named after CANN, a setting's value
    ("If your hosts rely on your own IRQ/NUMA pinning, set additional_config enable_cpu_binding=false.", False),
    ("Remove ASCEND_CUSTOM_OPP_PATH pointing at vllm_ascend/_cann_ops_custom/vendors/vllm-ascend.", False),
    ("Set VLLM_ASCEND_ENABLE_MLAPO=0 if you need the memory back, since MLAPO is on by default.", False),
    ("Stop calling tools/install_ops_a2.sh in deployment scripts; they are removed.", False),
    # an install the action is conditioned on is not what it asks (vllm-ascend W14 #7895: an index to switch)
    ("If you install vllm-ascend via the uv/wheelnext route, switch --extra-index-url to the new package index URL",
     False),
    ("If you install vllm-ascend outside the images, uninstall triton, then reinstall triton-ascend.", True),
])
def test_an_upgrade_is_told_by_what_the_labelled_action_asks(text: str, upgrade: bool) -> None:
    assert upgrade_action(text) is upgrade

