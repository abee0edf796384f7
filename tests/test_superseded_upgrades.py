"""An upgrade a later PR of the same edition asks again is said once, on the later PR (a real repository:
tests/git_support.py): ``VLLM_TAG`` moved to ``v0.14.0`` then to ``v0.14.1`` asks for ``v0.14.1``; the earlier PR keeps
its other upgrades, and a later downgrade supersedes nothing."""

from __future__ import annotations

from datetime import timedelta

import pytest

from prdigest.collect.facts import Surface, week_facts
from prdigest.collect.git import open_clone
from prdigest.kernel.actions import actions
from prdigest.kernel.models import PullRequest
from prdigest.kernel.superseded import superseded, without_superseded
from tests.connect_factories import entry_of
from tests.git_support import commit_week

DOCKERFILE = "FROM base:1.0\nARG VLLM_TAG={tag}\nRUN git clone --branch $VLLM_TAG vllm\n"
BASE = {
    "plugin/__init__.py": '"""plugin."""\n',
    "plugin/compat.py": 'from plugin.utils import vllm_version_is\n\nOLD = vllm_version_is("0.13.0")\n',
    "Dockerfile": DOCKERFILE.format(tag="v0.13.0"),
    "requirements.txt": "torch==2.8.0\n",
}
PRS: dict[int, tuple[str, dict[str, str | None]]] = {
    1: ("Drop vLLM 0.13.0 support", {"Dockerfile": DOCKERFILE.format(tag="v0.14.0"),
                                     "requirements.txt": "torch==2.9.0\n", "plugin/compat.py": "OLD = False\n"}),
    2: ("Update vLLM to 0.14.1", {"Dockerfile": DOCKERFILE.format(tag="v0.14.1")}),
    3: ("Pin torch 2.9.1", {"requirements.txt": "torch==2.9.1\n"}),
    4: ("Back to vLLM 0.14.0: 0.14.1 breaks the scheduler", {"Dockerfile": DOCKERFILE.format(tag="v0.14.0")}),
}


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> list[PullRequest]:
    repo = tmp_path_factory.mktemp("superseded") / "up"
    prs = commit_week(repo, BASE, PRS)
    facts = week_facts(prs, surface=Surface(), clone=open_clone(repo.as_uri(), state_dir=tmp_path_factory.mktemp("s")))
    # merged in their numbers' order, a day apart
    return [pr.model_copy(update={"changes": facts.changes[pr.number], "merged_at": pr.merged_at + timedelta(days=i)})
            for i, pr in enumerate(prs)]


def test_an_upgrade_asked_again_later_in_the_edition_is_said_on_the_later_pr(week: list[PullRequest]) -> None:
    assert actions(week[0].changes, "en") == ["Upgrade `VLLM` to `v0.14.0`, `torch` to `2.9.0` before pulling main."]
    assert any(c.detail == "support dropped" for c in week[0].changes)  # said once, beside the upgrade
    found = superseded(week)
    assert {n: s.by for n, s in found.items()} == {1: (2, 3)}  # vLLM by #2, torch by #3
    entries = [entry_of(pr).model_copy(update={"action": actions(pr.changes, "en")}) for pr in week]
    out = {e.number: e.action for e in without_superseded(entries, week, "en")}
    # both its upgrades are asked later, and so is the release it drops: nothing of it is left to do at the end of
    # the week
    assert out[1] == []
    # a later downgrade supersedes nothing: #2's upgrade and #4's downgrade are both said
    assert out[2] == ["Upgrade `VLLM` to `v0.14.1` before pulling main."]
    assert out[3] == ["Upgrade `torch` to `2.9.1` before pulling main."]
    assert out[4] == ["Downgrade `VLLM` to `v0.14.0` before pulling main."]


def test_an_earlier_pr_keeps_the_upgrades_no_later_pr_asks(week: list[PullRequest]) -> None:
    without_torch = [pr for pr in week if pr.number != 3]
    entries = [entry_of(pr).model_copy(update={"action": actions(pr.changes, "en")}) for pr in without_torch]
    out = {e.number: e.action for e in without_superseded(entries, without_torch, "en")}
    assert out[1] == ["Upgrade `torch` to `2.9.0` before pulling main."]


def test_an_editor_cleared_item_stays_out(week: list[PullRequest]) -> None:
    entries = [entry_of(week[0]).model_copy(update={"action": []}), entry_of(week[1])]
    assert without_superseded(entries, week[:2], "en")[0].action == []


def test_the_connect_step_says_an_upgrade_once_on_the_later_pr(week: list[PullRequest], tmp_path) -> None:
    from prdigest.connect.step import connect_edition
    from prdigest.state.store import open_store
    from tests.connect_factories import week_edition

    prs = week[:2]
    edition = week_edition(0, [entry_of(pr).model_copy(update={"action": actions(pr.changes, "en")}) for pr in prs])
    with open_store(str(tmp_path / "state.sqlite")) as store:
        out = {e.number: e.action for e in connect_edition(edition, prs, store).entries}
    assert out == {1: ["Upgrade `torch` to `2.9.0` before pulling main."],
                   2: ["Upgrade `VLLM` to `v0.14.1` before pulling main."]}


COMMIT = "d886c26d4d0123456789abcdef0123456789abcd"
TRACKING: dict[int, tuple[str, dict[str, str | None]]] = {
    5: ("Drop vLLM 0.13.0: build upstream main", {"Dockerfile": f"FROM base:1.0\nARG VLLM_COMMIT={COMMIT}\n"
                                                               "RUN git clone vllm && git -C vllm checkout "
                                                               "$VLLM_COMMIT\n"}),
    6: ("Upgrade vLLM to v0.14.1", {"Dockerfile": DOCKERFILE.format(tag="v0.14.1")}),
}


def test_a_release_replaced_by_a_commit_then_by_a_later_release_asks_for_that_release(tmp_path) -> None:
    prs = commit_week(tmp_path / "up", BASE, TRACKING)
    facts = week_facts(prs, surface=Surface(), clone=open_clone((tmp_path / "up").as_uri(), state_dir=tmp_path / "s"))
    week = [pr.model_copy(update={"changes": facts.changes[pr.number], "merged_at": pr.merged_at + timedelta(days=i)})
            for i, pr in enumerate(prs)]
    assert actions(week[0].changes, "en") == [
        "main no longer supports `VLLM` `v0.13.0`: install `VLLM` at commit `d886c26d4d` before pulling main."]
    entries = [entry_of(pr).model_copy(update={"action": actions(pr.changes, "en")}) for pr in week]
    out = {e.number: e.action for e in without_superseded(entries, week, "en")}
    # at the end of the week main builds v0.14.1, not the commit: one sentence, on the later PR
    assert out == {5: [], 6: ["Install `VLLM` `v0.14.1` before pulling main."]}


def test_an_item_an_editor_cleared_stays_out_when_a_later_pr_says_the_rest(week: list[PullRequest]) -> None:
    from prdigest.kernel.actions import action_key

    first, torch_later = week[0], week[2]
    # the editor cleared the vLLM items of #1 (its pin and the release it drops): its entry asks for torch only
    cleared = {action_key(c) for c in first.changes if c.kind == "dependency" and "vllm" in c.symbol.lower()}
    assert actions(first.changes, "en", cleared) == ["Upgrade `torch` to `2.9.0` before pulling main."]
    entries = [entry_of(pr).model_copy(update={"action": actions(pr.changes, "en", cleared)})
               for pr in (first, torch_later)]
    out = {e.number: e.action for e in without_superseded(entries, [first, torch_later], "en", cleared)}
    assert out == {1: [], 3: ["Upgrade `torch` to `2.9.1` before pulling main."]}


REAPPLIED: dict[int, tuple[str, dict[str, str | None]]] = {
    7: ("Revert \"Update torch to 2.9.0\"", {"requirements.txt": "torch==2.7.1\n"}),
    8: ("Update torch to 2.9.0 with the scheduler fix", {"requirements.txt": "torch==2.9.0\n"}),
}


def test_a_downgrade_a_later_pr_moves_up_again_is_said_once_on_the_later_pr(tmp_path) -> None:
    base = {**BASE, "requirements.txt": "torch==2.9.0\n"}  # last week's upgrade, reverted this week, then again
    prs = commit_week(tmp_path / "up", base, REAPPLIED)
    facts = week_facts(prs, surface=Surface(), clone=open_clone((tmp_path / "up").as_uri(), state_dir=tmp_path / "s"))
    week = [pr.model_copy(update={"changes": facts.changes[pr.number], "merged_at": pr.merged_at + timedelta(days=i)})
            for i, pr in enumerate(prs)]
    assert actions(week[0].changes, "en") == ["Downgrade `torch` to `2.7.1` before pulling main."]
    entries = [entry_of(pr).model_copy(update={"action": actions(pr.changes, "en")}) for pr in week]
    out = {e.number: e.action for e in without_superseded(entries, week, "en")}
    assert out == {7: [], 8: ["Upgrade `torch` to `2.9.0` before pulling main."]}
