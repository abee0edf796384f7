"""Verdicts weigh a change by who can see it: a platform upgrade is a deep read for those who run it, internal
renames and moves are mechanical, an internal rename is no API change (prdigest/draft/verdict.py)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from prdigest.draft.offline import OfflineDrafter
from prdigest.kernel.models import Change, FileChange, PullRequest, Verdict

WHEN = datetime(2026, 3, 20, tzinfo=timezone.utc)
BODY = ("This change upgrades the toolchain the plugin is built and tested against. The new release fixes the "
        "graph capture of dynamic shapes, which the model runner needs for the next feature.")


def _pr(title: str, files: list[FileChange], changes: list[Change], body: str = BODY) -> PullRequest:
    return PullRequest(number=1, url="https://github.com/o/r/pull/1", title=title, author="a", merged_at=WHEN,
                       body=body, files=files, changes=changes,
                       additions=sum(f.additions for f in files), deletions=sum(f.deletions for f in files))


def test_a_platform_upgrade_is_a_deep_read_and_says_what_moves() -> None:
    pr = _pr("Upgrade CANN to 9.1.0 and torch-npu to 2.10.0.post4",
             [FileChange(path="Dockerfile", status="modified", additions=2, deletions=2),
              FileChange(path="requirements.txt", status="modified", additions=1, deletions=1)],
             [Change(kind="dependency", symbol="CANN_VERSION", path="Dockerfile", before="9.0.0", after="9.1.0",
                     language="config", reach="public", reach_how="a runtime requirement (`Dockerfile`)"),
              Change(kind="dependency", symbol="torch-npu", path="requirements.txt", before="==2.10.0",
                     after="==2.10.0.post4", language="config", reach="public", reach_how="a runtime requirement")])
    draft = OfflineDrafter().draft(pr, [], "en")
    assert draft.verdict is Verdict.DEEP_READ
    assert "CANN 9.1.0" in draft.rationale and "torch-npu 2.10.0.post4" in draft.rationale


def test_internal_renames_and_moves_are_mechanical() -> None:
    renames = [Change(kind="renamed", symbol=f"Runner.step_{i}", path="pkg/worker/runner.py", before=f"Runner.go_{i}",
                      after=f"Runner.step_{i}", reach="internal", reach_how="not exported") for i in range(6)]
    pr = _pr("Refactor the model runner: rename the step methods across the worker and the attention backends",
             [FileChange(path=f"pkg/worker/m{i}.py", status="modified", additions=120, deletions=110) for i in range(5)],
             renames, body=BODY + " Interfaces are restructured for the next design; the trade-off is discussed.")
    draft = OfflineDrafter().draft(pr, [], "en")
    assert draft.verdict is not Verdict.DEEP_READ
    assert "mechanical" in draft.rationale


def test_an_internal_rename_is_not_weighed_as_an_api_change() -> None:
    fact = Change(kind="renamed", symbol="helper", path="pkg/util.py", before="help", after="helper")
    files = [FileChange(path="pkg/util.py", status="modified", additions=30, deletions=20)]
    public = OfflineDrafter().draft(_pr("Rename help to helper", files, [fact.model_copy(
        update={"reach": "public", "reach_how": "re-exported by `pkg/__init__.py`"})]), [], "en")
    internal = OfflineDrafter().draft(_pr("Rename help to helper", files, [fact.model_copy(
        update={"reach": "internal", "reach_how": "not exported"})]), [], "en")
    assert public.verdict is Verdict.SKIM and "(breaking)" in public.rationale
    assert internal.verdict is Verdict.SKIP and "breaking" not in internal.rationale


def test_a_constraint_is_not_groundwork() -> None:
    from prdigest.kernel.prtext.signals import extract
    body = "Adds validation so that this feature is not used with the conflicting `fused_mc2` op."
    assert not extract(_pr("Support hierarchy communication", [], [], body), []).groundwork
    assert extract(_pr("Add the kernel", [], [], "The kernel is not yet used: wiring lands next."), []).groundwork


def test_a_commit_pin_moving_is_not_the_platform_moving() -> None:
    pr = _pr("[CI] Main2main upgrade vllm commit to 0330",
             [FileChange(path="Dockerfile", status="modified", additions=1, deletions=1)],
             [Change(kind="dependency", symbol="VLLM_COMMIT", path="Dockerfile", before="14acf429ac08b6d5",
                     after="29e48707e8144b78", language="config", reach="public", reach_how="a runtime requirement")])
    assert OfflineDrafter().draft(pr, [], "en").verdict is not Verdict.DEEP_READ


def test_a_change_to_running_code_is_not_groundwork_whatever_its_body_prepares() -> None:
    body = ("In FULL mode a hard barrier before replay avoided a race, but it slowed PIECEWISE badly. This removes "
            "the barrier outside FULL mode, in preparation for FULL_AND_PIECEWISE.")
    files = [FileChange(path="pkg/compilation/graph.py", status="modified", additions=3, deletions=2)]
    changed = Change(kind="body", symbol="GraphWrapper.__call__", path="pkg/compilation/graph.py",
                     detail="body changed", reach="internal", reach_how="not exported")
    added = Change(kind="added", symbol="GraphWrapper.prepare", path="pkg/compilation/graph.py", reach="internal",
                   reach_how="not exported")
    from prdigest.draft.verdict import assess
    from prdigest.kernel.prtext.signals import extract

    def keys(pr: PullRequest) -> set[str]:
        return {r.key for r in assess(extract(pr, [])).reasons}

    assert "groundwork" not in keys(_pr("Remove sync for PIECEWISE", files, [changed], body))
    assert "groundwork" in keys(_pr("Add the prepare hook", files, [added], body))


def _pin(symbol: str, path: str, before: str, after: str, detail: str = "changed") -> Change:
    return Change(kind="dependency", symbol=symbol, path=path, before=before, after=after, detail=detail,
                  language="config", reach="public", reach_how="a runtime requirement")


_IMAGE = "registry.example/vendor/toolkit"
#: (case, pins, the platform upgrades said): what is the platform's own runtime moving, and what is not.
PLATFORM = [
    ("a base image's patch release is a new toolkit to install",
     [_pin(_IMAGE, "Dockerfile", "8.5.0-ubuntu22.04", "8.5.1-ubuntu22.04")], ["toolkit 8.5.1"]),
    ("a vendor installer the install guide runs moves with it",
     [_pin("Vendor-toolkit", "docs/install.md", "==8.5.0", "==8.5.1", detail="installer")], ["Vendor-toolkit 8.5.1"]),
    ("a toolkit's version setting in a Dockerfile",
     [_pin("TOOLKIT_VERSION", "Dockerfile", "9.0.0", "9.1.0")], ["TOOLKIT 9.1.0"]),
    ("a runtime package to a new release line",
     [_pin("torch-npu", "requirements.txt", "==2.9.0", "==2.10.0")], ["torch-npu 2.10.0"]),
    ("a runtime package's patch release is followed by its action",
     [_pin("torch", "requirements.txt", "==2.9.0", "==2.9.1")], []),
    ("a preview toolkit is for those who test it",
     [_pin(_IMAGE, "Dockerfile.small", "9.0.0-ubuntu", "9.1.0-beta.1-ubuntu")], []),
    ("a dev build of the kernel compiler",
     [_pin("triton-ascend", "docs/tutorial.md", "==3.2.0.dev20251229", "==3.2.0.dev20260105")], []),
    ("a toolkit's nightly build, named by its date",
     [_pin("Vendor-compiler", "docs/tutorial.md", "==20251225", "==20260105", detail="installer")], []),
    ("a library pin, however far it moves, is not the platform",
     [_pin("transformers", "requirements.txt", ">=4.57.4", "==5.5.3")], []),
    ("a source checkout's tag alone is which upstream the image ships",
     [_pin("UPSTREAM_TAG", "Dockerfile", "v0.17.0", "v0.18.0")], []),
    ("the upstream's release no longer supported: the baseline moved",
     [_pin("upstream", "pkg/compat.py", "0.17.0", "", detail="support dropped")], ["upstream > 0.17.0"]),
    ("... but not when main moves to a commit of the upstream's main instead",
     [_pin("upstream", "pkg/compat.py", "0.18.0", "", detail="support dropped"),
      _pin("UPSTREAM_TAG", "Dockerfile", "v0.18.0", "", detail="removed"),
      _pin("UPSTREAM_COMMIT", "Dockerfile", "", "35141a7eed0123456789", detail="added")], []),
    ("... nor to the next patch release of the same line",
     [_pin("upstream", "pkg/compat.py", "0.20.1", "", detail="support dropped"),
      _pin("UPSTREAM_TAG", "Dockerfile", "v0.20.1", "v0.20.2")], []),
]


@pytest.mark.parametrize("case,pins,said", PLATFORM, ids=[row[0] for row in PLATFORM])
def test_the_platform_is_its_own_runtime_moving_to_a_release(case: str, pins: list[Change], said: list[str]) -> None:
    from prdigest.draft.verdict import platform_upgrades
    from prdigest.kernel.prtext.signals import extract

    files = [FileChange(path=p, status="modified", additions=1, deletions=1) for p in dict.fromkeys(c.path for c in pins)]
    pr = _pr("Move main forward", files, pins)
    assert platform_upgrades(extract(pr, [])) == said
    verdict = OfflineDrafter().draft(pr, [], "en").verdict
    assert (verdict is Verdict.DEEP_READ) is bool(said)


def _setting(kind: str, before: str, after: str, detail: str = "default", reach: str = "public") -> Change:
    return Change(kind=kind, symbol="Config.feature", path="pkg/config.py", before=before, after=after,
                  detail=detail, language="python", reach=reach, reach_how="a config field users set")


#: (case, the setting's fact, whether it is a default every deployment now runs with)
DEFAULTS = [
    ("a feature switched on by default", _setting("config", "False", "True"), True),
    ("an environment switch turned on", _setting("env", "'0'", "'1'"), True),
    ("a mode the platform no longer rewrites", _setting("config", "PIECEWISE", "FULL_AND_PIECEWISE",
                                                        detail="no longer rewritten"), True),
    ("a tuned number is a setting to look up, not a new way to run", _setting("config", "0.8", "1.0"), False),
    ("a default that was none is an opt-in given a value", _setting("argument", "None", "auto"), False),
    ("a setting nobody outside sets", _setting("config", "False", "True", reach="internal"), False),
]


@pytest.mark.parametrize("case,fact,flipped", DEFAULTS, ids=[row[0] for row in DEFAULTS])
def test_a_default_every_deployment_runs_with_is_weighed(case: str, fact: Change, flipped: bool) -> None:
    from prdigest.draft.verdict import assess
    from prdigest.kernel.prtext.signals import extract

    pr = _pr("Bind CPUs on ARM hosts", [FileChange(path="pkg/config.py", status="modified", additions=6, deletions=2)],
             [fact], body="Binds each worker's CPUs to the NUMA node of its device on ARM hosts.")
    assert ("fact-default" in {r.key for r in assess(extract(pr, [])).reasons}) is flipped
