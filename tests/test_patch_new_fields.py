"""A required field added to a class whose kind the hunk does not show (its ``@dataclass`` line above the hunk's
context, git's header giving only ``class Metadata:``), read from the PR's patch alone on a real git repository
and matched against a downstream's constructor calls committed in another."""

from __future__ import annotations

from pathlib import Path

from prdigest.collect.facts import Surface, patch_facts
from prdigest.kernel.models import Change, Impact
from tests.git_support import commit_week
from tests.impact_support import line_in as _line
from tests.impact_support import match_downstream

UP = ("up",)

METADATA = '''import torch
from dataclasses import dataclass


@dataclass
class Metadata:
    """Tensors for pooling."""

    num_reqs: int
    num_tokens: int
    max_len: int
    prompt_lens: torch.Tensor
    prompt_token_ids: torch.Tensor | None
    pooling_params: list[int]
    pooling_states: list[int]
    cursor: int | None = None

    def __getitem__(self, indices: slice):
        return Metadata(
            prompt_lens=self.prompt_lens[indices],
            prompt_token_ids=self.prompt_token_ids,
            pooling_params=self.pooling_params[indices],
            pooling_states=self.pooling_states[indices],
        )
'''
#: a required field between required ones: the ``@dataclass`` line is four lines above the hunk
ADDED = METADATA.replace("    prompt_token_ids: torch.Tensor | None\n",
                         "    prompt_token_ids: torch.Tensor | None\n    prompt_token_ids_cpu: torch.Tensor | None\n")
#: the same PR also makes the class frozen: another hunk shows its kind
FROZEN = ADDED.replace("@dataclass\nclass Metadata:", "@dataclass(frozen=True)\nclass Metadata:")
#: a plain class whose annotations its own ``__init__`` fills: the same hunk reads alike
PLAIN = METADATA.replace("@dataclass\n", "")
PLAIN_ADDED = ADDED.replace("@dataclass\n", "")

MINE = '''from up.metadata import Metadata


def missing(lens, ids, params):
    return Metadata(3, 4, 5, prompt_lens=lens, prompt_token_ids=ids, pooling_params=params, pooling_states=[])


def passing(lens, ids, params):
    return Metadata(3, 4, 5, prompt_lens=lens, prompt_token_ids=ids, prompt_token_ids_cpu=ids, pooling_params=params,
                    pooling_states=[])


def spreading(**kwargs):
    return Metadata(**kwargs)
'''


def _facts(tmp_path: Path, before: str, after: str) -> list[Change]:
    [pr] = commit_week(tmp_path / "upstream", {"up/__init__.py": "", "up/metadata.py": before},
                       {1: ("Keep the prompt's token ids on the CPU too", {"up/metadata.py": after})})
    return [f for f in patch_facts(pr, Surface(packages=UP)) if f.kind == "signature" and f.symbol == "Metadata"]


def _calls(found: list[Impact]) -> list[tuple[int, str]]:
    return sorted((i.line, i.severity) for i in found if i.fact.startswith("signature"))


def test_a_field_added_out_of_sight_of_the_class_kind_is_a_check_for_calls_missing_it(tmp_path: Path) -> None:
    facts = _facts(tmp_path, METADATA, ADDED)
    assert [f.detail.split(";")[0] for f in facts] == ["+prompt_token_ids_cpu"]
    found = match_downstream(tmp_path, facts, {"ds/pool.py": MINE})
    # the call passing it and the one spreading **kwargs are not flagged
    assert _calls(found) == [(_line(MINE, "return Metadata(3, 4, 5, prompt_lens=lens, prompt_token_ids=ids, pooling"), "check")]


def test_a_field_added_breaks_calls_missing_it_when_another_hunk_shows_a_dataclass(tmp_path: Path) -> None:
    facts = _facts(tmp_path, METADATA, FROZEN)
    assert [f.detail.split(";")[0] for f in facts] == ["+prompt_token_ids_cpu"]
    found = match_downstream(tmp_path, facts, {"ds/pool.py": MINE})
    assert _calls(found) == [(_line(MINE, "return Metadata(3, 4, 5, prompt_lens=lens, prompt_token_ids=ids, pooling"), "breaks")]


def test_a_plain_class_gaining_an_annotation_never_breaks_a_call(tmp_path: Path) -> None:
    found = match_downstream(tmp_path, _facts(tmp_path, PLAIN, PLAIN_ADDED), {"ds/pool.py": MINE})
    assert _calls(found) == [(_line(MINE, "return Metadata(3, 4, 5, prompt_lens=lens, prompt_token_ids=ids, pooling"),
                              "check")]


def test_a_field_with_a_default_or_a_method_line_gives_no_constructor_fact(tmp_path: Path) -> None:
    with_default = METADATA.replace("    pooling_states: list[int]\n",
                                    "    pooling_states: list[int]\n    extra: int = 0\n")
    assert _facts(tmp_path / "a", METADATA, with_default) == []
    in_method = METADATA.replace("            pooling_states=self.pooling_states[indices],\n",
                                 "            pooling_states=self.pooling_states[indices],\n            cursor=None,\n")
    assert _facts(tmp_path / "b", METADATA, in_method) == []
