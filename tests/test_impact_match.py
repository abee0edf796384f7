"""The match of upstream facts against a downstream's uses: one row per case, both severities, negatives."""

from __future__ import annotations

import pytest

from prdigest.connect.impact.hunks import facts_from_patches
from prdigest.connect.impact.index import resolve_uses, summarize
from prdigest.connect.impact.match import Signature, UseTable, match_changes
from prdigest.kernel.models import Change, FileChange, PullRequest

DOWNSTREAM = {
    "ds/__init__.py": "",
    "ds/compat.py": "from vllm.model_executor.layers.fused_moe import FusedMoE\n",
    "ds/ops.py": '''"""Nothing in vllm.model_executor.layers.fused_moe.layer.FusedMoE's docstring is a use."""
import vllm.envs as envs
from vllm.model_executor.layers.fused_moe import FusedMoE as FM
from ds.compat import FusedMoE
from unittest import mock
from vllm.v1.worker.gpu_model_runner import GPUModelRunner
from vllm.attention.backends.abstract import AttentionBackend
from vllm.utils import cdiv, round_up
from other.lib import make_layer


class AscendMoE(FM):
    def forward(self, x, dtype=None):
        return super().forward(x)


class Runner(GPUModelRunner):
    def _prepare_inputs(self, scheduler_output, num_scheduled):
        pass

    def execute_model(self, scheduler_output, **kwargs):
        pass


class Backend(AttentionBackend):
    def get_name(self):
        return "ascend"


def _helper():
    return 1


def f():
    if envs.VLLM_USE_V1:
        cdiv(1, 2)
        round_up(3, multiple=4)
    setattr(FusedMoE, "select_experts", f)
    with mock.patch("vllm.distributed.parallel_state.get_tp_group"):
        make_layer()
''',
}
OPS = "ds/ops.py"


def L(marker: str) -> int:
    """The line of the downstream's ops.py that holds ``marker``."""
    return next(i for i, line in enumerate(DOWNSTREAM[OPS].splitlines(), 1) if marker in line)
UP = ("vllm",)
LAYER = "vllm/model_executor/layers/fused_moe/layer.py"


@pytest.fixture(scope="module")
def table() -> UseTable:
    uses = resolve_uses([summarize(p, t, UP) for p, t in DOWNSTREAM.items()], UP)
    return UseTable.of("ascend", uses, UP)


def _impacts(table, *changes, partial=False):
    return match_changes(list(changes), table, UP, number=7, partial=partial)


CASES = [
    # (fact, expected (path, line, how, severity) set)
    pytest.param(Change(kind="renamed", symbol="FusedMoE", path=LAYER, before="FusedMoE", after="FusedMoEFactory"),
                 # one flag per downstream function: ops.py's module level (two imports, a subclass) says it once
                 {("ds/compat.py", 1, "imports", "breaks"), (OPS, L("as FM"), "imports", "breaks"),
                  (OPS, L("def forward"), "overrides", "breaks"), (OPS, L("setattr(FusedMoE"), "patches", "breaks")},
                 id="renamed class imported under an alias, re-exported and subclassed"),
    pytest.param(Change(kind="signature", symbol="FusedMoE.forward", path=LAYER, before="(self, x, dtype)",
                        after="(self, x)", detail="-dtype"),
                 {(OPS, L("def forward"), "overrides", "breaks")}, id="removed parameter of an overridden method"),
    pytest.param(Change(kind="signature", symbol="FusedMoE.forward", path=LAYER, before="(self, x, dtype=None)",
                        after="(self, x, dtype=None, eps=1e-6)", detail="+eps=1e-6"),
                 {(OPS, L("def forward"), "overrides", "check")}, id="new optional parameter no upstream call passes"),
    pytest.param(Change(kind="signature", symbol="FusedMoE.forward", path=LAYER, before="(self, x, dtype=None)",
                        after="(self, x, dtype=None, eps=1e-6)", detail="+eps=1e-6 (upstream passes eps)",
                        passed=("eps",)),
                 {(OPS, L("def forward"), "overrides", "breaks")}, id="new optional parameter an upstream call passes"),
    pytest.param(Change(kind="signature", symbol="FusedMoE.select_experts", path=LAYER, before="(self, logits)",
                        after="(self, logits, top_k=2)", detail="+top_k=2 (upstream passes top_k)",
                        passed=("top_k",)),
                 {(OPS, L("setattr(FusedMoE"), "patches", "breaks")}, id="new optional parameter of a patched method upstream passes"),
    pytest.param(Change(kind="signature", symbol="GPUModelRunner.execute_model",
                        path="vllm/v1/worker/gpu_model_runner.py", before="(self, scheduler_output)",
                        after="(self, scheduler_output, intermediate_tensors=None)"),
                 set(), id="new optional parameter, the override takes **kwargs: it already fits"),
    pytest.param(Change(kind="signature", symbol="GPUModelRunner._prepare_inputs",
                        path="vllm/v1/worker/gpu_model_runner.py", before="(self, scheduler_output, num_scheduled)",
                        after="(self, scheduler_output, num_scheduled, spec=None)", public=False),
                 {(OPS, L("def _prepare_inputs"), "overrides", "check")}, id="private overridden method: check, not breaks"),
    pytest.param(Change(kind="body", symbol="FusedMoE.forward", path=LAYER),
                 {(OPS, L("def forward"), "overrides", "check")}, id="changed body of an overridden method"),
    pytest.param(Change(kind="body", symbol="FusedMoE.select_experts", path=LAYER),
                 {(OPS, L("setattr(FusedMoE"), "patches", "check")}, id="changed body of a patched method"),
    pytest.param(Change(kind="abstract", symbol="AttentionBackend.get_builder_cls",
                        path="vllm/attention/backends/abstract.py"),
                 {(OPS, L("class Backend"), "subclasses", "breaks")}, id="new abstract method on a subclassed class"),
    pytest.param(Change(kind="abstract", symbol="AttentionBackend.get_name", path="vllm/attention/backends/abstract.py"),
                 set(), id="new abstract method the subclass already defines"),
    pytest.param(Change(kind="removed", symbol="get_tp_group", path="vllm/distributed/parallel_state.py"),
                 {(OPS, L("mock.patch("), "patches", "breaks")}, id="patch target written as a string"),
    pytest.param(Change(kind="signature", symbol="round_up", path="vllm/utils/__init__.py",
                        before="(x, multiple=8)", after="(x, multiple=16)"),
                 set(), id="changed default the call overrides: no impact"),
    pytest.param(Change(kind="signature", symbol="cdiv", path="vllm/utils/__init__.py", before="(a, b=1)",
                        after="(a, b=2)"),
                 {(OPS, L("cdiv(1, 2)"), "calls", "check")}, id="changed default the call relies on: check"),
    pytest.param(Change(kind="signature", symbol="round_up", path="vllm/utils/__init__.py",
                        before="(x, multiple)", after="(x, step)"),
                 {(OPS, L("round_up(3"), "calls", "breaks"), (OPS, L("from vllm.utils"), "imports", "check")},
                 id="renamed keyword a call passes"),
    pytest.param(Change(kind="env", symbol="VLLM_USE_V1", path="vllm/envs.py", before="1", after=""),
                 {(OPS, L("envs.VLLM_USE_V1"), "calls", "breaks")}, id="removed environment variable read through the module"),
    pytest.param(Change(kind="moved", symbol="GPUModelRunner", path="vllm/v1/worker/gpu/model_runner.py",
                        before="vllm/v1/worker/gpu_model_runner.py", after="vllm/v1/worker/gpu/model_runner.py"),
                 {(OPS, L("import GPUModelRunner"), "imports", "breaks")}, id="moved class: once per file, its import"),
    # negatives
    pytest.param(Change(kind="removed", symbol="make_layer", path="vllm/model_executor/layers/utils.py"),
                 set(), id="same-named symbol of another package"),
    pytest.param(Change(kind="removed", symbol="_helper", path="vllm/model_executor/layers/utils.py", public=False),
                 set(), id="private helper the downstream has a namesake of"),
    pytest.param(Change(kind="removed", symbol="FusedMoE", path="vllm/attention/layer.py"),
                 set(), id="same name in an unrelated upstream module"),
    pytest.param(Change(kind="file-deleted", symbol="docs/moe.md", path="docs/moe.md", language="text"),
                 set(), id="docs change"),
    pytest.param(Change(kind="dependency", symbol="torch", path="requirements/common.txt", language="config"),
                 set(), id="a pin"),
    pytest.param(Change(kind="env", symbol="VLLM_USE_V1", path="vllm/envs.py", after="dynamic_eplb",
                        detail="required"),
                 set(), id="an environment variable a new check requires: the downstream's read still works"),
]


@pytest.mark.parametrize("change, expected", CASES)
def test_each_fact_hits_exactly_the_uses_it_touches(table, change, expected):
    got = {(i.path, i.line, i.how, i.severity) for i in _impacts(table, change)}
    assert got == expected


def test_an_impact_names_the_fact_the_pr_and_the_downstream(table):
    change = Change(kind="renamed", symbol="FusedMoE", path=LAYER, before="FusedMoE", after="FusedMoEFactory")
    first = _impacts(table, change)[0]
    assert (first.downstream, first.number, first.severity, first.partial) == ("ascend", 7, "breaks", False)
    assert first.fact == "renamed: FusedMoE → FusedMoEFactory"
    assert first.symbol == "vllm.model_executor.layers.fused_moe.FusedMoE"


def test_the_most_severe_fact_wins_for_one_line(table):
    body = Change(kind="body", symbol="FusedMoE.forward", path=LAYER)
    sig = Change(kind="signature", symbol="FusedMoE.forward", path=LAYER, before="(self, x, dtype)", after="(self, x)")
    impacts = [i for i in _impacts(table, body, sig) if i.line == L("def forward")]
    assert [(i.severity, i.fact.split(":")[0]) for i in impacts] == [("breaks", "signature")]


PATCH = """@@ -40,7 +40,7 @@ class FusedMoE(torch.nn.Module):
     def __init__(self, num_experts):
         self.num_experts = num_experts
\x20
-    def forward(self, x, dtype):
+    def forward(self, x):
         return x
\x20
@@ -90,6 +90,3 @@ def select_experts(x):
     y = x + 1
-    y = y * 2
     return y
-
-def old_helper():
-    return 0
"""


def test_facts_from_patches_are_matched_and_marked_partial(table):
    pr = PullRequest(number=9, url="https://github.com/o/r/pull/9", merged_at="2026-05-01T00:00:00Z",
                     files=[FileChange(path=LAYER, patch=PATCH),
                            FileChange(path="docs/a.md", patch="@@ -1 +1 @@\n-def x(a)\n+def x(b)\n")])
    facts = facts_from_patches(pr, UP)
    assert {(f.kind, f.symbol) for f in facts} == {("signature", "FusedMoE.forward"), ("body", "select_experts"),
                                                  ("removed", "old_helper")}
    impacts = _impacts(table, *facts, partial=True)
    assert {(i.line, i.how, i.severity, i.partial) for i in impacts} == {(L("def forward"), "overrides", "breaks", True)}


def test_signature_parsing_reads_defaults_and_star_args():
    sig = Signature.parse("def f(self, a: int, b=(1, 2), *args, c: str = 'x', **kw) -> None")
    assert sig is not None and sig.names == ("a", "b", "c") and sig.defaults == {"b": "(1, 2)", "c": "'x'"}
    assert sig.variadic_kw


ABSTRACT_PATCH = """@@ -5,3 +5,7 @@ class AttentionBackend(abc.ABC):
     @abc.abstractmethod
     def get_name(self):
         ...
+
+    @abc.abstractmethod
+    def get_builder_cls(self):
+        ...
"""


def test_a_new_abstract_method_in_a_patch_is_a_partial_check_for_subclasses(table):
    pr = PullRequest(number=10, url="https://github.com/o/r/pull/10", merged_at="2026-05-01T00:00:00Z",
                     files=[FileChange(path="vllm/attention/backends/abstract.py", patch=ABSTRACT_PATCH)])
    facts = facts_from_patches(pr, UP)
    assert [(f.kind, f.symbol) for f in facts] == [("abstract", "AttentionBackend.get_builder_cls")]
    impacts = _impacts(table, *facts, partial=True)
    assert {(i.line, i.how, i.severity, i.partial) for i in impacts} == {(L("class Backend"), "subclasses", "breaks",
                                                                          True)}


DEFAULT_PATCH = """@@ -43,3 +43,3 @@ class FusedMoE(torch.nn.Module):
\x20
-    def forward(self, x, dtype=None):
+    def forward(self, x, dtype=None, eps=1e-6):
         return x
"""
CALLER_PATCH = """@@ -10,3 +10,3 @@ def run(layer, x):
-    return layer.forward(x)
+    return layer.forward(x, eps=1e-5)
"""
SUPER_PATCH = """@@ -10,3 +10,3 @@ class Child(FusedMoE):
-        return super().forward(x)
+        return super().forward(x, eps=1e-5)
"""


@pytest.mark.parametrize("caller, severity", [
    pytest.param(None, "check", id="no added line passes it"),
    pytest.param(CALLER_PATCH, "breaks", id="an added line passes it by keyword"),
    pytest.param(SUPER_PATCH, "check", id="only through super()"),
])
def test_patches_say_whether_an_added_line_passes_a_new_default(table, caller, severity):
    files = [FileChange(path=LAYER, patch=DEFAULT_PATCH)]
    if caller:
        files.append(FileChange(path="vllm/model_executor/models/llama.py", patch=caller))
    pr = PullRequest(number=9, url="https://github.com/o/r/pull/9", merged_at="2026-05-01T00:00:00Z", files=files)
    impacts = _impacts(table, *facts_from_patches(pr, UP), partial=True)
    assert {(i.line, i.how, i.severity) for i in impacts if i.fact.startswith("signature")} == {
        (L("def forward"), "overrides", severity)}
