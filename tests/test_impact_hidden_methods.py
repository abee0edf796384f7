"""An instance attribute a base class's ``__init__`` now sets under the name of a method hides a subclass's method
of that name (vLLM 0.16.0's ``UnquantizedFusedMoEMethod.__init__``: ``self.apply_monolithic =
self._select_monolithic()``, over vllm-gaudi's own ``apply_monolithic``), unless the subclass never runs that
``__init__``. Real git repositories made here; the downstream is indexed from its files."""

from __future__ import annotations

from pathlib import Path

from prdigest.connect.impact.index import resolve_uses, summarize
from prdigest.connect.impact.match import UseTable, match_changes
from tests.impact_support import facts_between

UP = ("up",)
BEFORE = {
    "up/__init__.py": "",
    "up/method.py": '''
        class MethodBase:
            def apply_fused(self, x):
                raise NotImplementedError


        class Unquantized(MethodBase):
            def __init__(self, fused):
                self.fused = fused

            def fused_cuda(self, x):
                return x
        ''',
    "up/layer.py": '''
        def run(method, x):
            return method.apply_fused(x)
        ''',
}
AFTER = {
    "up/method.py": '''
        class MethodBase:
            def apply_fused(self, x):
                raise NotImplementedError


        class Unquantized(MethodBase):
            def __init__(self, fused):
                self.fused = fused
                if fused:
                    self.apply_fused = self._select()

            def _select(self):
                return self.fused_cuda

            def fused_cuda(self, x):
                return x
        ''',
    "up/layer.py": '''
        def run(method, x, scale=1):
            return method.apply_fused(x) * scale
        ''',
}
DOWNSTREAM = {
    "ds/__init__.py": "",
    "ds/hpu.py": '''from up.method import Unquantized


class HPUUnquantized(Unquantized):
    def apply_fused(self, x):
        return x * 2


class OwnInit(Unquantized):
    def __init__(self, fused):
        self.fused = fused

    def apply_fused(self, x):
        return x * 3


class Plain(Unquantized):
    def fused_cuda(self, x):
        return x
''',
}


def test_an_attribute_the_base_init_now_sets_hides_a_subclass_method_of_that_name(tmp_path: Path):
    facts = facts_between(tmp_path, BEFORE, AFTER, UP)
    assert ("attribute", "Unquantized.apply_fused", "added") in {(f.kind, f.symbol, f.detail) for f in facts}
    uses = resolve_uses([summarize(p, t, UP) for p, t in DOWNSTREAM.items()], UP)
    found = match_changes(facts, UseTable.of("ds", uses, UP), UP)
    lines = DOWNSTREAM["ds/hpu.py"].splitlines()
    hidden = {(i.line, i.severity) for i in found if i.symbol.endswith("apply_fused")}
    # HPUUnquantized runs Unquantized.__init__, whose attribute now hides its apply_fused; OwnInit never runs it
    assert hidden == {(lines.index("    def apply_fused(self, x):") + 1, "breaks")}
    assert "hides your method `apply_fused`" in next(i.fact for i in found if i.symbol.endswith("apply_fused"))
