"""No false breaks, no echoes (issue 36, item 3): a use that already fits the new upstream is not flagged, a
change ``*args, **kwargs`` absorbs is a check, and one upstream fact is said once per downstream function.
Upstream changes are real commits (tests.impact_support.facts_between); the downstream is indexed from files."""

from __future__ import annotations

from pathlib import Path

from tests.test_impact_uses import flagged, impacts, line

BEFORE = {"up/__init__.py": "", "up/layers.py": '''
    class Norm:
        def forward(self, x):
            return x


    def run(norm, x):
        return norm.forward(x)


    def scale(x, dtype=None):
        return x


    class Cache:
        def __init__(self, size):
            self.size = size
    '''}


def test_an_override_that_already_takes_the_new_parameter_is_not_flagged(tmp_path: Path) -> None:
    after = {"up/layers.py": BEFORE["up/layers.py"].replace("def forward(self, x):", "def forward(self, x, eps=1e-6):")
             .replace("return norm.forward(x)", "return norm.forward(x, eps=1e-5)")}
    downstream = '''
        from up.layers import Norm


        class Ready(Norm):
            def forward(self, x, eps=1e-6):
                return x


        class Behind(Norm):
            def forward(self, x):
                return x
        '''
    facts, found = impacts(tmp_path, BEFORE, after, {"ds/__init__.py": "", "ds/norm.py": downstream})
    assert any(f.kind == "signature" and "upstream passes eps" in f.detail for f in facts)
    assert {(i.line, i.severity) for i in found if i.fact.startswith("signature")} == {
        (line(downstream, "def forward(self, x):"), "breaks")}  # Behind only


def test_a_parameter_removed_into_args_and_kwargs_is_a_check_for_a_call_that_passes_it(tmp_path: Path) -> None:
    after = {"up/layers.py": BEFORE["up/layers.py"].replace("def scale(x, dtype=None):",
                                                            "def scale(x, *args, **kwargs):")}
    downstream = '''
        from up.layers import scale


        def go():
            return scale(1, dtype=2)
        '''
    facts, found = impacts(tmp_path, BEFORE, after, {"ds/__init__.py": "", "ds/use.py": downstream})
    (fact,) = [f for f in facts if f.kind == "signature"]
    assert fact.detail == "+*args, +**kwargs, -dtype→**kwargs" and not fact.breaks  # not a breaking entry
    assert flagged(found) == set()
    assert flagged(found, "check") == {("ds/use.py", line(downstream, "scale(1, dtype=2)"), "calls")}


def test_a_constructor_call_is_matched_against_the_classes_init(tmp_path: Path) -> None:
    after = {"up/layers.py": BEFORE["up/layers.py"].replace("def __init__(self, size):",
                                                            "def __init__(self, size, block):")}
    downstream = '''
        from up.layers import Cache


        def make():
            return Cache(16)


        def make_ready():
            return Cache(16, block=4)
        '''
    _, found = impacts(tmp_path, BEFORE, after, {"ds/__init__.py": "", "ds/use.py": downstream})
    assert flagged(found) == {("ds/use.py", line(downstream, "Cache(16)"), "calls")}


def test_one_flag_per_upstream_fact_and_downstream_function(tmp_path: Path) -> None:
    after = {"up/layers.py": BEFORE["up/layers.py"].replace("def scale(x, dtype=None):", "def scale(x):")}
    downstream = '''
        from up.layers import scale


        def first():
            scale(1, dtype=2)
            scale(2, dtype=3)
            return scale(3, dtype=4)


        def second():
            return scale(4, dtype=5)
        '''
    _, found = impacts(tmp_path, BEFORE, after, {"ds/__init__.py": "", "ds/use.py": downstream})
    assert flagged(found) == {("ds/use.py", line(downstream, "scale(1, dtype=2)"), "calls"),
                              ("ds/use.py", line(downstream, "scale(4, dtype=5)"), "calls")}


def test_a_deleted_module_is_flagged_once_per_file_at_its_import(tmp_path: Path) -> None:
    before = {**BEFORE, "up/old.py": '''
        class Worker:
            def load(self):
                pass

            def save(self):
                pass
        '''}
    after = {"up/old.py": None}
    downstream = '''
        from up import old


        def _load(self):
            pass


        old.Worker.load = _load
        old.Worker.save = _load


        class Mine(old.Worker):
            def load(self):
                pass
        '''
    _, found = impacts(tmp_path, before, after, {"ds/__init__.py": "", "ds/patch.py": downstream})
    assert flagged(found) == {("ds/patch.py", line(downstream, "from up import old"), "imports")}


RUNNER = {"up/__init__.py": "", "up/runner.py": '''
    class Runner:
        def attach(self, config):
            return config

        def load(self):
            return self.attach(None)
    '''}


def test_a_parameter_passed_only_from_a_method_the_downstream_also_overrides_is_a_check(tmp_path: Path) -> None:
    after = {"up/runner.py": RUNNER["up/runner.py"].replace("def attach(self, config):",
                                                            "def attach(self, config, is_profiling=False):")
             .replace("return self.attach(None)", "return self.attach(None, is_profiling=True)")}
    downstream = '''
        from up.runner import Runner


        class OwnLoad(Runner):
            def attach(self, config):
                return config

            def load(self):
                return self.attach(1)


        class UpstreamLoad(Runner):
            def attach(self, config):
                return config
        '''
    facts, found = impacts(tmp_path, RUNNER, after, {"ds/__init__.py": "", "ds/runner.py": downstream})
    assert [(f.passed, f.callers) for f in facts if f.kind == "signature"] == [(("is_profiling",), ("Runner.load",))]
    severity = {(i.line, i.severity) for i in found if i.fact.startswith("signature")}
    first, second = [i for i, row in enumerate(downstream.splitlines()) if "def attach" in row]
    assert severity == {(line(downstream, "def attach"), "check"), (second, "breaks")}


def test_a_module_turned_into_a_package_is_not_deleted_and_only_its_moved_names_break(tmp_path: Path) -> None:
    before = {"up/__init__.py": "", "up/moe.py": '''
        class MoEMethod:
            pass


        class Fp8MoEMethod(MoEMethod):
            pass
        '''}
    after = {"up/moe.py": None,
             "up/moe/__init__.py": "from up.moe.base import MoEMethod\n\n__all__ = ['MoEMethod']\n",
             "up/moe/base.py": "class MoEMethod:\n    pass\n",
             "up/moe/fp8.py": "from up.moe.base import MoEMethod\n\n\nclass Fp8MoEMethod(MoEMethod):\n    pass\n"}
    downstream = '''
        from up import moe
        from up.moe import MoEMethod
        from up.moe import Fp8MoEMethod


        class Mine(Fp8MoEMethod):
            pass
        '''
    facts, found = impacts(tmp_path, before, after, {"ds/__init__.py": "", "ds/moe.py": downstream})
    assert "file-deleted" not in {f.kind for f in facts}
    assert flagged(found) == {("ds/moe.py", line(downstream, "import Fp8MoEMethod"), "imports")}


def test_a_dataclass_field_added_without_a_default_breaks_the_constructor_calls_that_lack_it(tmp_path: Path) -> None:
    before = {"up/__init__.py": "", "up/config.py": '''
        from dataclasses import dataclass, field


        @dataclass
        class CacheConfig:
            block_size: int
            swap_space: float = 4.0
            tags: list = field(default_factory=list)
        '''}
    after = {"up/config.py": '''
        from dataclasses import dataclass, field


        @dataclass
        class CacheConfig:
            block_size: int
            num_blocks: int
            tags: list = field(default_factory=list)
        '''}
    downstream = '''
        from up.config import CacheConfig


        def old_way():
            return CacheConfig(16, swap_space=2.0)


        def new_way():
            return CacheConfig(block_size=16, num_blocks=8)
        '''
    facts, found = impacts(tmp_path, before, after, {"ds/__init__.py": "", "ds/cfg.py": downstream})
    (fact,) = [f for f in facts if f.kind == "signature"]
    assert fact.symbol == "CacheConfig" and fact.breaks  # the generated __init__ is written nowhere
    assert flagged(found) == {("ds/cfg.py", line(downstream, "CacheConfig(16"), "calls")}


def test_a_re_export_a_package_drops_breaks_the_import_through_the_package(tmp_path: Path) -> None:
    before = {"up/__init__.py": "", "up/ops/__init__.py": "from up.ops.norm import RMSNorm\nfrom .act import SiluAndMul\n",
              "up/ops/norm.py": "class RMSNorm:\n    pass\n", "up/ops/act.py": "class SiluAndMul:\n    pass\n"}
    after = {"up/ops/__init__.py": "from .act import SiluAndMul\n"}
    downstream = '''
        from up.ops import RMSNorm, SiluAndMul
        from up.ops.norm import RMSNorm as Direct
        '''
    facts, found = impacts(tmp_path, before, after, {"ds/__init__.py": "", "ds/ops.py": downstream})
    assert [(f.kind, f.symbol, f.detail) for f in facts] == [("removed", "RMSNorm", "re-export removed")]
    assert flagged(found) == {("ds/ops.py", line(downstream, "import RMSNorm, SiluAndMul"), "imports")}


def test_a_method_moved_up_into_a_base_in_another_module_is_no_removal(tmp_path: Path) -> None:
    before = {"up/__init__.py": "", "up/base.py": "class Base:\n    pass\n", "up/runner.py": '''
        from up.base import Base


        class Runner(Base):
            def warm_up(self):
                return 1
        '''}
    after = {"up/base.py": "class Base:\n    def warm_up(self):\n        return 1\n", "up/runner.py": '''
        from up.base import Base


        class Runner(Base):
            pass
        '''}
    downstream = '''
        from up.runner import Runner


        class Mine(Runner):
            def warm_up(self):
                return 2


        def go(r: Runner):
            return Runner.warm_up(r)
        '''
    facts, found = impacts(tmp_path, before, after, {"ds/__init__.py": "", "ds/run.py": downstream})
    assert ("body", "Runner.warm_up", "now inherited from Base") in {(f.kind, f.symbol, f.detail) for f in facts}
    assert flagged(found) == set()
    assert flagged(found, "check") == {("ds/run.py", line(downstream, "def warm_up"), "overrides")}


def test_a_removed_class_is_flagged_once_per_file_not_once_per_override_of_its_methods(tmp_path: Path) -> None:
    before = {"up/__init__.py": "", "up/spec.py": '''
        class Proposer:
            def load(self):
                pass

            def propose(self, x):
                return x
        '''}
    after = {"up/spec.py": "VERSION = 2\n"}
    downstream = '''
        from up.spec import Proposer


        class NPUProposer(Proposer):
            def load(self):
                pass

            def propose(self, x):
                return x
        '''
    facts, found = impacts(tmp_path, before, after, {"ds/__init__.py": "", "ds/spec.py": downstream})
    assert ("removed", "Proposer") in {(f.kind, f.symbol) for f in facts}
    assert flagged(found) == {("ds/spec.py", line(downstream, "import Proposer"), "imports")}
