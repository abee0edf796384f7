"""What a reader can learn from a PR whose names are all internal (prdigest/draft/learn.py): a root cause
explained, a new mechanism, a shared base class, a trade-off argued; and what teaches none of these."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone

import pytest

from prdigest.draft import learn
from prdigest.draft.offline import OfflineDrafter
from prdigest.draft.verdict import assess
from prdigest.kernel.models import Change, FileChange, PullRequest, Verdict
from prdigest.kernel.prtext.signals import extract

WHEN = datetime(2026, 3, 20, tzinfo=timezone.utc)
RUNNER = "plugin/worker/runner.py"
KERNEL = "csrc/combine/op_kernel/combine_kernel.hpp"


def _pr(title: str, body: str, files: list[FileChange], changes: Sequence[Change] = ()) -> PullRequest:
    return PullRequest(number=1, url="https://github.com/o/r/pull/1", title=title, author="a", merged_at=WHEN,
                       body=body, files=files, changes=list(changes),
                       additions=sum(f.additions for f in files), deletions=sum(f.deletions for f in files))


def _file(path: str, added: int, removed: int = 0, status: str = "modified") -> FileChange:
    return FileChange(path=path, status=status, additions=added, deletions=removed)


def _fact(kind: str, symbol: str, path: str = RUNNER, **more: str) -> Change:
    return Change(kind=kind, symbol=symbol, path=path, reach="internal", reach_how="not exported", **more)  # type: ignore[arg-type]


SILENT_CAUSE = ("The runner cached the `block_tables` tensor at capture time. Replaying the graph after the "
                "scheduler swapped the tensor kept using the stale copy, which caused garbled outputs for "
                "sliding-window layers. The fix updates the captured tensor in place with `copy_` in "
                "`Runner.replay`, so the graph reads the rows the scheduler wrote for this step; "
                "`Runner.capture` now keeps the persistent buffer it hands to the graph.")
LOUD_CAUSE = ("The helper passed the offsets as a list where the kernel expects a tensor, which resulted in a "
              "TypeError at startup when speculative decoding was enabled. It now builds the tensor first.")
COST_CAUSE = ("Clearing the state with a boolean-mask index_put forces a host-device sync on every prefill step, "
              "which leaves the device idle. A small kernel fills the rows on the device instead.")
REFACTOR = ("Moves the prefill and decode branches into their own functions so either order can be chosen, instead "
            "of the fixed order; throughput 1200 tok/s either way. Behavior is identical.")

LESSONS = [
    # (why, title, body, files, facts, expected lesson keys)
    ("a fix whose description traces silently wrong output to its cause", "[BugFix] Fix sliding-window replay",
     SILENT_CAUSE, [_file(RUNNER, 12, 4)], [_fact("body", "Runner.replay")], {"root-cause"}),
    ("a fix that says what its change is needed for: accuracy", "[BugFix] Fix quantized routing accuracy",
     "Passes the routing scale from the quantized apply down to expert selection. This is necessary for keeping "
     "accuracy in models that scale their routing weights.", [_file("plugin/ops/moe.py", 10, 3)],
     [_fact("signature", "select_experts", "plugin/ops/moe.py")], {"root-cause"}),
    ("a fix whose failure announces itself (an error) teaches no class of silent bug", "[BugFix] Fix startup",
     LOUD_CAUSE, [_file(RUNNER, 12, 4)], [_fact("body", "Runner.prepare")], set()),
    ("the same explanation in a docs-only change ships nothing to study", "[Doc] Fix the replay notes",
     SILENT_CAUSE, [_file("docs/replay.md", 12, 4)], [], set()),
    ("a cost traced to what causes it", "[Perf] Clear SSM state on device", COST_CAUSE,
     [_file("plugin/ops/state.py", 60, 10)], [_fact("body", "clear_state", "plugin/ops/state.py")], {"trade-off"}),
    ("a choice argued, but the author says behaviour is identical: a refactor", "Refactor the scheduler loop",
     REFACTOR, [_file("plugin/core/scheduler.py", 200, 180)], [_fact("body", "Scheduler.schedule")], set()),
    ("a new module of substance defining classes is a mechanism", "[Feature] Emulate unified buffers",
     "Adds a buffer wrapper keeping a host and a device view in step.",
     [_file("plugin/worker/uva.py", 260, status="added"), _file(RUNNER, 20, 5)],
     [_fact("added", "UvaBuffer", "plugin/worker/uva.py"), _fact("added", "DirtyRows", "plugin/worker/uva.py")],
     {"mechanism"}),
    ("a new kernel file alone weighs as a kernel fact, not as a mechanism", "[Ops] Add a penalty kernel",
     "Adds a Triton kernel for the penalties.", [_file("plugin/ops/triton/penalty.py", 240, status="added")],
     [_fact("kernel", "penalty_kernel", "plugin/ops/triton/penalty.py"),
      _fact("added", "apply_penalties", "plugin/ops/triton/penalty.py")], set()),
    ("a new model file follows a pattern: no mechanism", "[Model] Support Foo",
     "Adds the Foo model.", [_file("plugin/models/foo.py", 400, status="added")],
     [_fact("added", "FooForCausalLM", "plugin/models/foo.py")], set()),
    ("new files that only replace removed ones (a move) are no mechanism", "Split the ops module",
     "Splits the module in two.",
     [_file("plugin/ops/a.py", 200, status="added"), _file("plugin/ops/all.py", 0, 190)],
     [_fact("added", "OpA", "plugin/ops/a.py")], set()),
    ("a new base class two classes now derive from is a contract", "Share one pattern base across passes",
     "Each fusion pattern registers itself with both compilers through one base.",
     [_file("plugin/compile/base.py", 60, status="added"), _file("plugin/compile/p1.py", 20, 20),
      _file("plugin/compile/p2.py", 20, 20)],
     [_fact("added", "BasePattern", "plugin/compile/base.py"),
      _fact("bases", "NormPattern", "plugin/compile/p1.py", before="", after="BasePattern"),
      _fact("bases", "RopePattern", "plugin/compile/p2.py", before="", after="BasePattern"),
      _fact("body", "PassManager.register", "plugin/compile/manager.py")], {"contract"}),
    ("an alternative named beside an accuracy score only is how the code is written, not a trade-off",
     "[Feature] Support Foo on the fast path",
     "Refactor `FastModel` so the shared `initialize` path uses `config.head_dim` instead of duplicating the "
     "setup of each subclass. GSM8K accuracy is 0.91 before and after.",
     [_file("plugin/fast/model.py", 120, 40)], [_fact("body", "FastModel.initialize", "plugin/fast/model.py")],
     set()),
    ("the same kind of alternative beside a speed figure is a trade-off argued", "[Perf] Gather less KV in prefill",
     "The prefill path now gathers only the required KV instead of the full KV. TTFT drops from 120 ms to 80 ms "
     "at 32k tokens.", [_file("plugin/attention/prefill.py", 120, 40)],
     [_fact("body", "Prefill.gather", "plugin/attention/prefill.py")], {"trade-off"}),
    ("a kernel fix that says how its cores synchronise teaches that class of bug", "[BugFix] Fix combine at 32 experts",
     "The completion flag was set too early: the unified buffers still in use share that space. It is now set "
     "after the last copy.", [_file(KERNEL, 6, 5)], [], {"sync"}),
    ("a new kernel is not a fix of one", "[BugFix] Add a combine kernel with its own barrier",
     "Adds a kernel whose cores wait at a barrier.", [_file(KERNEL, 300, status="added")], [], set()),
    ("a kernel fix about a dtype names no synchronisation", "[BugFix] Fix combine for bf16 scales",
     "The kernel now casts bf16 scales to fp32 before the multiply.", [_file(KERNEL, 6, 5)], [], set()),
    ("a Python fix naming a barrier is no kernel's synchronisation", "[BugFix] Drop the barrier before replay",
     "The barrier before replay is no longer needed.", [_file(RUNNER, 2, 6)], [_fact("body", "Runner.replay")],
     set()),
    ("one method re-signed on three implementations is an interface they follow", "Report graph support",
     "Builders now report whether they support graph capture through one class method.",
     [_file(f"plugin/attention/{n}.py", 10, 4) for n in ("a", "b", "c")],
     [_fact("signature", f"{n}Builder.graph_support", f"plugin/attention/{n.lower()}.py") for n in ("A", "B", "C")],
     {"interface"}),
    ("a main2main sync re-signing one method everywhere follows the upstream's interface", "[Misc] main2main 0519",
     "Follows the upstream's new sampler signature.",
     [_file(f"plugin/sample/{n}.py", 10, 4) for n in ("a", "b", "c")],
     [_fact("signature", f"{n}Sampler.sample", f"plugin/sample/{n.lower()}.py") for n in ("A", "B", "C")], set()),
    ("the same method on two classes is a pair, not yet an interface", "Report graph support",
     "Builders now report whether they support graph capture through one class method.",
     [_file(f"plugin/attention/{n}.py", 10, 4) for n in ("a", "b")],
     [_fact("added", f"{n}Builder.graph_support", f"plugin/attention/{n.lower()}.py") for n in ("A", "B")], set()),
    ("a constructor argument threaded through every class is wiring", "Pass the config down",
     "Each builder now takes the config.", [_file(f"plugin/attention/{n}.py", 10, 4) for n in ("a", "b", "c")],
     [_fact("signature", f"{n}Builder.__init__", f"plugin/attention/{n.lower()}.py") for n in ("A", "B", "C")],
     set()),
    ("test classes adding the same test method are no interface", "Test graph support",
     "Adds the same check to each test class.", [_file(f"tests/test_{n}.py", 10) for n in ("a", "b", "c")],
     [_fact("added", f"Test{n}.test_graph", f"tests/test_{n.lower()}.py") for n in ("A", "B", "C")], set()),
    ("methods only hoisted into a new base are code moved, no contract", "Share one base across W8A8 schemes",
     "Moves the shared methods into one base class.",
     [_file("plugin/quant/base.py", 60, status="added"), _file("plugin/quant/a.py", 2, 30),
      _file("plugin/quant/b.py", 2, 30)],
     [_fact("added", "W8A8Base", "plugin/quant/base.py"),
      _fact("bases", "SchemeA", "plugin/quant/a.py", before="", after="W8A8Base"),
      _fact("bases", "SchemeB", "plugin/quant/b.py", before="", after="W8A8Base"),
      _fact("body", "SchemeA.apply", "plugin/quant/a.py", detail="now inherited from W8A8Base")], set()),
]


@pytest.mark.parametrize(("why", "title", "body", "files", "facts", "expected"), LESSONS, ids=[r[0] for r in LESSONS])
def test_lessons(why: str, title: str, body: str, files: list[FileChange], facts: list[Change],
                 expected: set[str]) -> None:
    assert {x.key for x in learn.lessons(extract(_pr(title, body, files, facts), []))} == expected, why


def test_a_small_internal_fix_that_explains_its_root_cause_is_a_deep_read() -> None:
    """Every fact internal, under 40 lines: reach and size would make it a skim; its explanation is the study."""
    fix = _pr("[BugFix] Fix sliding-window replay", SILENT_CAUSE, [_file(RUNNER, 12, 4)],
              [_fact("body", "Runner.replay")])
    loud = _pr("[BugFix] Fix startup", LOUD_CAUSE, [_file(RUNNER, 12, 4)], [_fact("body", "Runner.prepare")])
    drafter = OfflineDrafter()
    entry = drafter.draft(fix, [], "en")
    assert entry.verdict is Verdict.DEEP_READ
    assert "root cause" in entry.rationale and "kept using the stale copy" in entry.rationale  # the author's words
    assert drafter.draft(loud, [], "en").verdict is not Verdict.DEEP_READ


def test_a_lesson_is_said_in_chinese_too() -> None:
    fix = _pr("[BugFix] Fix sliding-window replay", SILENT_CAUSE, [_file(RUNNER, 12, 4)],
              [_fact("body", "Runner.replay")])
    assert "根因" in OfflineDrafter().draft(fix, [], "zh-CN").rationale


def test_a_small_change_that_traces_a_cost_to_its_cause_is_a_deep_read() -> None:
    """Five lines that remove a barrier: the size says skim, the argument for it is the study."""
    body = ("Replaying a graph in FULL mode updates kernel parameters, so a hard barrier was added before `replay` "
            "to avoid races. In PIECEWISE mode nothing is updated, and the barrier caused severe performance "
            "regressions there, because every replay waited for the whole stream. `Graph.replay` now syncs only "
            "in FULL mode; `Graph.capture` is unchanged. We tried this twice before and saw accuracy issues that "
            "no longer reproduce on main.")
    pr = _pr("[Performance] Remove the sync before PIECEWISE replay", body, [_file(RUNNER, 3, 2)],
             [_fact("body", "Graph.replay")])
    entry = OfflineDrafter().draft(pr, [], "en")
    assert entry.verdict is Verdict.DEEP_READ, entry.rationale
    assert "trade-off" in entry.rationale


@pytest.mark.parametrize("body", ["because wrong " * 5000, " \n" * 30000, "avoids " + " " * 60000 + "x",
                                  "instead of " * 6000 + "1.5x faster"], ids=["words", "blank", "spaces", "phrases"])
def test_a_hostile_description_is_read_in_bounded_time(body: str) -> None:
    import time
    pr = _pr("[BugFix] Fix it", body, [_file(RUNNER, 12, 4)], [_fact("body", "Runner.replay")])
    began = time.perf_counter()
    learn.lessons(extract(pr, []))
    assert time.perf_counter() - began < 2.0


def test_a_new_compiled_op_counts_its_new_files_where_new_python_code_needs_a_lesson() -> None:
    """A new fused kernel's C++ has no classes the mechanism lesson reads: its new files weigh as new source."""
    body = "Fuses dispatch, the FFN and combine into one kernel for W4A8 and registers it with the MoE layer."
    kernel = [_fact("kernel", "fused_moe_w4a8", "plugin/ops/fused.py"), _fact("body", "MoeLayer.forward",
                                                                              "plugin/ops/moe.py")]
    cpp = _pr("[Kernel] Fuse W4A8 dispatch, FFN and combine", body,
              [_file("csrc/fused_w4a8/op_kernel/fused_w4a8_kernel.cpp", 900, status="added"),
               _file("csrc/torch_binding.cpp", 20), _file("plugin/ops/moe.py", 10, 2)], kernel)
    py = _pr("[Ops] Add a penalty kernel", body, [_file("plugin/ops/triton/penalty.py", 240, status="added"),
                                                  _file("plugin/ops/moe.py", 10, 2)], kernel)
    assert "new" in {r.key for r in assess(extract(cpp, [])).reasons}
    assert "new" not in {r.key for r in assess(extract(py, [])).reasons}
