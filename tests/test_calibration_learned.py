"""The learned verdict: the calibration's richer features (the drafter's score and reasons, the parts of the tree,
the description's length), its deep-read threshold, its folds that keep one PR's labels together, and the
calibrations saved before any of these still applying."""

from __future__ import annotations

import json
from pathlib import Path

from prdigest.draft import calibrations
from prdigest.draft.calibration import DEEP_READ_AT, KEEP, Calibration, calibrated, features, fit
from prdigest.draft.calibration_features import drafter_features, part_features
from prdigest.kernel.models import Change, DraftEntry, PullRequest, Verdict
from prdigest.state.store import open_store

REPO = "vllm-project/vllm-ascend"


def _pr(number: int, title: str, paths: list[str], body: str = "", labels: tuple[str, ...] = ()) -> PullRequest:
    return PullRequest.model_validate({
        "number": number, "url": f"https://github.com/{REPO}/pull/{number}", "title": title, "body": body,
        "merged_at": "2026-03-02T00:00:00Z", "labels": list(labels),
        "files": [{"path": p, "additions": 30, "deletions": 4} for p in paths],
        "additions": 30 * len(paths), "deletions": 4 * len(paths)})


def test_the_features_say_what_the_drafter_saw_and_which_parts_of_the_tree_a_pr_touches() -> None:
    kernel = _pr(1, "[Perf] Fuse the rotary op: 1.4x faster decode", ["vllm_ascend/ops/rotary.py",
                                                                       "csrc/rotary/op_kernel/rotary.cpp",
                                                                       "tests/ut/ops/test_rotary.py"],
                 body="Fuses the rotary embedding into one AscendC kernel: decode is 1.4x faster than before "
                      "(12 ms -> 8.5 ms per step). " * 4)
    found = features(kernel, [], Verdict.SKIM)
    assert {"part:ops", "part:csrc", "part:tests", "body:400-1200"} <= found
    assert any(f.startswith("score:") for f in found) and {"why:perf", "why:explained"} <= found
    docs = _pr(2, "[Doc] Fix a typo", ["docs/source/tutorials/a.md"])
    assert part_features(docs) == {"part:docs"} and "body:<150" in drafter_features(docs, [])
    ci = _pr(3, "[CI] Bump the runner image", [".github/workflows/ut.yaml"])
    assert part_features(ci) == {"part:ci"}
    public = features(_pr(4, "Add an option", ["vllm_ascend/envs.py"]).model_copy(update={"changes": [
        Change(kind="env", symbol="VLLM_ASCEND_X", path="vllm_ascend/envs.py", after="added", reach="public")]}),
        [], Verdict.SKIM)
    assert "public:1-2" in public


def test_a_deep_read_probable_enough_is_said_even_when_skim_is_more_probable() -> None:
    weights = {"bias": [0.0, 0.3, -2.0]}  # deep-read 0.41, skim 0.55, skip 0.04
    old = Calibration(weights, 0.1, 20)
    assert old.verdict({"bias"}) is Verdict.SKIM  # saved before the threshold: the most probable
    new = Calibration(weights, 0.1, 20, deep_read_at=DEEP_READ_AT)
    assert new.probabilities({"bias"})[0] >= DEEP_READ_AT and new.verdict({"bias"}) is Verdict.DEEP_READ
    unsure = Calibration({"bias": [-1.0, 0.3, 0.0]}, 0.1, 20, deep_read_at=DEEP_READ_AT)
    assert unsure.verdict({"bias"}) is Verdict.SKIM  # below the threshold: the more probable of the other two


def test_two_labels_of_one_pr_are_cross_validated_together_so_labels_without_a_pattern_move_nothing() -> None:
    # 40 PRs, each labelled by two people alike, each with a feature of its own (a label) and its verdict drawn with
    # no relation to anything the features show: a fit that scores on the other copy of a PR's label would learn
    # each PR by heart and move verdicts; cross-validated by PR, nothing beats the drafter.
    verdicts = [Verdict.SKIM, Verdict.SKIP, Verdict.DEEP_READ, Verdict.SKIP, Verdict.SKIM]
    examples, groups = [], []
    for i in range(40):
        pr = _pr(100 + i, f"Change {i}", [f"vllm_ascend/m{i}.py"], labels=(f"x{i}",))
        feats = features(pr, [], Verdict.SKIM)
        label = verdicts[(i * 7) % 5] if i % 3 else Verdict.SKIM
        examples += [(feats, label), (feats, label)]
        groups += [pr.number, pr.number]
    apart = fit(examples)  # each label its own fold: the twin copy is in the fitting folds
    assert apart.strength != KEEP
    together = fit(examples, groups=groups)
    assert together.strength == KEEP
    assert all(together.verdict(f) is Verdict.SKIM for f, _ in examples)


def test_a_saved_calibration_of_older_features_still_applies_from_a_real_store(tmp_path: Path) -> None:
    store = open_store(tmp_path / "state.sqlite")
    try:
        calibrations.save(store, REPO, Calibration({"bias": [0.0] * 3}, 0.1, 12))
        # As an older version wrote it: no threshold, a feature no longer made, none of the new ones.
        old = {"weights": {"bias": [0.0, 0.0, 0.0], "drafted:deep-read": [2.0, 0.0, 0.0],
                           "drafted:skim": [0.0, 2.0, 0.0], "drafted:skip": [0.0, 0.0, 2.0],
                           "only:doc": [-1.0, -1.0, 3.0], "gone:feature": [9.0, 0.0, 0.0]},
               "strength": 0.03, "labels": 120, "cv_calibrated": 0.8, "cv_drafter": 0.7, "source": "gold w.jsonl",
               "classes": ["deep-read", "skim", "skip"], "meta": {}}
        store.execute("UPDATE calibrations SET model = ?", (json.dumps(old),))
        loaded = calibrations.latest(store, REPO)
    finally:
        store.close()
    assert loaded is not None and loaded.deep_read_at is None
    draft = DraftEntry(number=5, headline="h", verdict=Verdict.SKIM, rationale="Skim: a page.", drafter="offline")
    moved = calibrated(draft, _pr(5, "[Doc] A page", ["docs/a.md"]), [], "en", loaded)
    assert moved.verdict is Verdict.SKIP  # the weight it has (only:doc) applies, the new features weigh nothing
    kept = calibrated(draft, _pr(6, "[Core] A change", ["vllm_ascend/a.py"]), [], "en", loaded)
    assert kept.verdict is Verdict.SKIM
    again = Calibration.from_json(fit([(features(_pr(i, f"t{i}", ["a.py"]), [], Verdict.SKIM), Verdict.SKIM)
                                       for i in range(1, 13)]).to_json())
    assert again.deep_read_at == DEEP_READ_AT


def test_calibrate_takes_several_labelled_files_or_a_folder_and_refuses_a_label_file_naming_it(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from flows.cli import app
    from tests.test_calibration import TOPICS, run, week, write

    # Two people labelled the same week, each in a file of their own; the next week is not labelled.
    first, second = week(1000, 16, TOPICS), week(1000, 16, TOPICS)
    folder = tmp_path / "labelled"
    folder.mkdir()
    write(folder / "w47.ana.jsonl", first)
    write(folder / "w47.ben.jsonl", second)
    state = str(tmp_path / "state.sqlite")
    fitted = CliRunner().invoke(app, ["calibrate", "--gold", str(folder / "w47.ana.jsonl"), "--gold",
                                      str(folder / "w47.ben.jsonl"), "--state", state, "--language", "en"])
    assert fitted.exit_code == 0, fitted.output
    assert "calibration fitted on 72 labels (gold w47.ana.jsonl, w47.ben.jsonl;" in fitted.output
    nxt = write(tmp_path / "week2.jsonl", week(2000, 24, ["attn", "cache", "graph", "router"]))
    after = run(tmp_path, nxt, state)
    assert all(e["verdict"] == {"[Perf]": "deep-read", "[Doc] ": "skip", "[Bugfi": "skim"}[e["title"][:6]]
               for e in after.values())
    again = CliRunner().invoke(app, ["calibrate", "--gold", str(folder), "--state", state, "--language", "en"])
    assert again.exit_code == 0 and "fitted on 72 labels (gold w47.ana.jsonl, w47.ben.jsonl;" in again.output

    labels = tmp_path / "vllm-project-vllm-2026-W47.ana.json"
    labels.write_text(json.dumps({"labeller": "ana", "repo": "vllm-project/vllm", "week": "2026-W47",
                                  "labels": {"1000": {"verdict": "skim"}}}))
    refused = CliRunner().invoke(app, ["calibrate", "--gold", str(labels), "--state", state])
    assert refused.exit_code == 2 and f"{labels}: a file of labels by PR number carries no PR text" in refused.output
    empty = tmp_path / "empty"
    empty.mkdir()
    nothing = CliRunner().invoke(app, ["calibrate", "--gold", str(empty), "--state", state])
    assert nothing.exit_code == 2 and f"{empty}: no labelled file (*.jsonl) in the folder" in nothing.output
    other = write(tmp_path / "other.jsonl", [{**r, "url": r["url"].replace("vllm-project/vllm", "acme/pkg")}
                                             for r in week(3000, 16, TOPICS)])
    mixed = CliRunner().invoke(app, ["calibrate", "--gold", str(folder / "w47.ana.jsonl"), "--gold", str(other),
                                     "--state", state])
    assert mixed.exit_code == 2 and "of 2 repos (acme/pkg, vllm-project/vllm)" in mixed.output
