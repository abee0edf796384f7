"""The benchmark's labelled downstreams (benchmarks.labelled_downstreams): a labels file read into its name,
packages and release pair, refused with the file and field named when it cannot be scored, and downstreams grouped
by release pair so each pair's upstream facts are built once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.impact_downstreams import DATA, GAUDI_DATA, TPU_DATA
from benchmarks.labelled_downstreams import LabelsError, by_pair, load_labelled

LABELS = {"upstream_before": "0.19.1", "upstream_after": "0.20.1", "d0": "a" * 40, "d1": "b" * 40,
          "adaptations": [], "package": "ds"}


def _labels(tmp_path: Path, name: str, **fields: object) -> Path:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({**LABELS, **fields}), encoding="utf-8")
    return path


def test_a_labels_file_gives_its_name_packages_and_release_pair(tmp_path: Path) -> None:
    one = load_labelled(_labels(tmp_path, "one", downstream="org/plugin-one", package=["ds", "ds_ext", "ds"]),
                        tmp_path)
    assert (one.name, one.packages, one.pair) == ("plugin-one", ("ds", "ds_ext"), ("0.19.1", "0.20.1"))
    two = load_labelled(_labels(tmp_path, "two"), tmp_path)
    assert (two.name, two.packages) == ("two", ("ds",))  # no ``downstream``: the file's stem


def test_downstreams_of_one_release_pair_are_grouped_in_the_order_given(tmp_path: Path) -> None:
    a = load_labelled(_labels(tmp_path, "a"), tmp_path)
    b = load_labelled(_labels(tmp_path, "b", upstream_before="0.18.1", upstream_after="0.19.1"), tmp_path)
    c = load_labelled(_labels(tmp_path, "c"), tmp_path)
    pairs = by_pair([a, b, c])
    assert list(pairs) == [("0.19.1", "0.20.1"), ("0.18.1", "0.19.1")]
    assert [d.name for d in pairs[("0.19.1", "0.20.1")]] == ["a", "c"]
    with pytest.raises(LabelsError, match="'a' is given twice"):
        by_pair([a, b, a])


def test_one_downstream_over_two_release_pairs_is_scored_under_two_names(tmp_path: Path) -> None:
    first = load_labelled(_labels(tmp_path, "first", downstream="org/plugin"), tmp_path)
    later = load_labelled(_labels(tmp_path, "later", downstream="org/plugin", upstream_before="0.17.1",
                                  upstream_after="0.18.1"), tmp_path)
    pairs = by_pair([first, later])
    assert [d.name for d in pairs[("0.19.1", "0.20.1")]] == ["plugin"]
    assert [d.name for d in pairs[("0.17.1", "0.18.1")]] == ["plugin 0.17.1→0.18.1"]
    with pytest.raises(LabelsError, match="'plugin 0.17.1→0.18.1' is given twice"):
        by_pair([first, later, later])


@pytest.mark.parametrize(("fields", "said"), [
    ({"package": None}, "'package' must be"),
    ({"package": []}, "'package' must be"),
    ({"package": ["ds", "not a name"]}, "'package' must be"),
    ({"upstream_after": ""}, "'upstream_after' is missing"),
    ({"adaptations": {}}, "'adaptations' is missing or not a list"),
])
def test_a_labels_file_that_cannot_be_scored_is_refused_naming_file_and_field(tmp_path: Path, fields: dict,
                                                                                said: str) -> None:
    path = _labels(tmp_path, "bad", **fields)
    with pytest.raises(LabelsError, match=said) as caught:
        load_labelled(path, tmp_path)
    assert str(path) in str(caught.value)


def test_a_missing_package_or_git_directory_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "nopkg.json"
    path.write_text(json.dumps({k: v for k, v in LABELS.items() if k != "package"}), encoding="utf-8")
    with pytest.raises(LabelsError, match="'package' is missing"):
        load_labelled(path, tmp_path)
    with pytest.raises(LabelsError, match="does not exist"):
        load_labelled(_labels(tmp_path, "ok"), tmp_path / "nowhere")


def test_the_three_committed_label_files_share_one_release_pair(tmp_path: Path) -> None:
    named = [load_labelled(p, tmp_path) for p in (DATA, GAUDI_DATA, TPU_DATA)]
    assert [(d.name, d.packages) for d in named] == [
        ("vllm-ascend", ("vllm_ascend",)), ("vllm-gaudi", ("vllm_gaudi",)), ("tpu-inference", ("tpu_inference",))]
    assert list(by_pair(named)) == [("0.19.1", "0.20.1")]
