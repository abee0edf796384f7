"""Every kind of downstream use the match must see (issue 36, item 2): each case builds the upstream's change in
a real git repository (tests.impact_support.facts_between), indexes a downstream from its files, and matches."""

from __future__ import annotations

import textwrap
from pathlib import Path

from prdigest.connect.impact.index import resolve_uses, summarize
from prdigest.connect.impact.match import UseTable, match_changes
from prdigest.kernel.models import Change, Impact
from tests.impact_support import facts_between


def _dedent(files: dict[str, str | None]) -> dict[str, str | None]:
    return {p: textwrap.dedent(t).lstrip("\n") if t is not None else None for p, t in files.items()}


def impacts(tmp_path: Path, before: dict[str, str | None], after: dict[str, str | None],
            downstream: dict[str, str], upstream: tuple[str, ...] = ("up",)) -> tuple[list[Change], list[Impact]]:
    """The facts of ``before`` → ``after`` and their impacts on ``downstream`` (files by path)."""
    facts = facts_between(tmp_path, _dedent(before), _dedent(after), upstream)
    files = _dedent(downstream)  # type: ignore[arg-type]
    uses = resolve_uses([summarize(p, t or "", upstream) for p, t in files.items()], upstream)
    return facts, match_changes(facts, UseTable.of("ds", uses, upstream), upstream)


def line(text: str, marker: str) -> int:
    """The 1-based line of dedented ``text`` holding ``marker``."""
    return next(i for i, row in enumerate(textwrap.dedent(text).lstrip("\n").splitlines(), 1) if marker in row)


def flagged(found: list[Impact], severity: str = "breaks") -> set[tuple[str, int, str]]:
    return {(i.path, i.line, i.how) for i in found if i.severity == severity}


USER = '''
    from transformers.models.llama.modeling import LlamaCache, rotate


    def go():
        return rotate(LlamaCache())
    '''


def test_a_removal_in_a_src_layout_upstream_matches_the_downstream_import(tmp_path: Path) -> None:
    before = {"src/transformers/__init__.py": "", "src/transformers/models/__init__.py": "",
              "src/transformers/models/llama/__init__.py": "",
              "src/transformers/models/llama/modeling.py": '''
                  class LlamaCache:
                      pass


                  def rotate(x):
                      return x
                  '''}
    after = {"src/transformers/models/llama/modeling.py": '''
                  class LlamaCache:
                      pass
                  '''}
    facts, found = impacts(tmp_path, before, after, {"ds/__init__.py": "", "ds/use.py": USER},
                           upstream=("transformers",))
    assert [(f.kind, f.symbol) for f in facts] == [("removed", "rotate")]
    # once per file, at the import (the call in go() echoes it)
    assert flagged(found) == {("ds/use.py", line(USER, "import"), "imports")}


#: Parameters as vLLM's formatter writes them, past 240 characters of signature text once their annotations are
#: dropped.
LONG = ", ".join(f"parameter_number_{i}_of_a_wide_layer: dict[str, int] | None = None" for i in range(9))
CALLER = '''
    from up.layers import Builder


    class NPUBuilder(Builder):
        def build(self, size, parameter_number_0=None):
            return size
    '''


def test_a_signature_longer_than_240_characters_is_compared_whole(tmp_path: Path) -> None:
    before = {"up/__init__.py": "", "up/layers.py": f'''
        class Builder:
            def build(self, size, {LONG}):
                return size
        '''}
    after = {"up/layers.py": f'''
        class Builder:
            def build(self, size, {LONG}, *, must_have):
                return size
        '''}
    facts, found = impacts(tmp_path, before, after, {"ds/__init__.py": "", "ds/use.py": CALLER})
    assert [(f.kind, f.detail) for f in facts if f.kind == "signature"] == [("signature", "+must_have")]
    assert ("ds/use.py", line(CALLER, "def build"), "overrides") in flagged(found)


SUBCLASSES = '''
    from up.layers import Platform


    class NPUPlatform(Platform):
        def name(self):
            return "npu"


    class CPUPlatform(Platform):
        def name(self):
            return "cpu"

        def seed_all(self, seed):
            pass
    '''


def test_a_base_method_that_now_raises_not_implemented_is_an_obligation_on_subclasses(tmp_path: Path) -> None:
    before = {"up/__init__.py": "", "up/layers.py": '''
        class Platform:
            def name(self):
                raise NotImplementedError

            def seed_all(self, seed):
                pass
        '''}
    after = {"up/layers.py": '''
        class Platform:
            def name(self):
                raise NotImplementedError

            def seed_all(self, seed):
                """Seed every device."""
                raise NotImplementedError("each platform seeds its own devices")
        '''}
    facts, found = impacts(tmp_path, before, after, {"ds/__init__.py": "", "ds/platform.py": SUBCLASSES})
    assert ("abstract", "Platform.seed_all") in {(f.kind, f.symbol) for f in facts}
    told = {(i.path, i.line, i.severity) for i in found if i.fact.startswith("abstract")}
    # CPUPlatform already has it; NPUPlatform is told to check (it fails only where upstream calls it)
    assert told == {("ds/platform.py", line(SUBCLASSES, "class NPUPlatform"), "check")}


BASE = {"up/__init__.py": "", "up/base.py": '''
    from typing import Generic, TypeVar

    T = TypeVar("T")


    class Base(Generic[T]):
        def run(self, x):
            return x

        def helper(self):
            return 1

        def keep(self):
            return 2


    def scale(x):
        return x
    '''}


def test_a_subclass_of_a_subscripted_generic_base_is_seen(tmp_path: Path) -> None:
    after = {"up/base.py": BASE["up/base.py"].replace("def run(self, x):", "def run(self, x, *, mode):")}
    downstream = '''
        from up.base import Base


        class Mine(Base[int]):
            def run(self, x):
                return x
        '''
    _, found = impacts(tmp_path, BASE, after, {"ds/__init__.py": "", "ds/mine.py": downstream})
    assert ("ds/mine.py", line(downstream, "def run"), "overrides") in flagged(found)


def test_a_monkey_patch_through_an_alias_of_the_upstream_module_is_seen(tmp_path: Path) -> None:
    after = {"up/base.py": BASE["up/base.py"].replace("    def scale(x):\n        return x\n", "")}
    downstream = '''
        import up.base

        M = up.base


        def my_scale(x):
            return x * 2


        M.scale = my_scale
        '''
    facts, found = impacts(tmp_path, BASE, after, {"ds/__init__.py": "", "ds/patch.py": downstream})
    assert ("removed", "scale") in {(f.kind, f.symbol) for f in facts}
    assert ("ds/patch.py", line(downstream, "M.scale ="), "patches") in flagged(found)


def test_a_self_call_in_a_subclass_reaches_the_upstream_base_method(tmp_path: Path) -> None:
    after = {"up/base.py": BASE["up/base.py"].replace("        def helper(self):\n            return 1\n", "")}
    downstream = '''
        from up.base import Base


        class Mine(Base):
            def go(self):
                self.keep()
                return self.helper()

            def own(self):
                return 3

            def also(self):
                return self.own()
        '''
    facts, found = impacts(tmp_path, BASE, after, {"ds/__init__.py": "", "ds/mine.py": downstream})
    assert ("removed", "Base.helper") in {(f.kind, f.symbol) for f in facts}
    assert flagged(found) == {("ds/mine.py", line(downstream, "self.helper()"), "calls")}


def test_a_parameter_inserted_before_one_a_call_passes_by_position_breaks_the_call(tmp_path: Path) -> None:
    before = {"up/__init__.py": "", "up/place.py": "def place(x, y):\n    return x, y\n"}
    after = {"up/place.py": "def place(x, z=None, y=None):\n    return x, y\n"}
    downstream = '''
        from up.place import place


        def by_position():
            return place(1, 2)


        def by_keyword():
            return place(1, y=2)
        '''
    facts, found = impacts(tmp_path, before, after, {"ds/__init__.py": "", "ds/use.py": downstream})
    (fact,) = [f for f in facts if f.kind == "signature"]
    assert "y: position 2→3" in fact.detail and fact.breaks
    assert flagged(found) == {("ds/use.py", line(downstream, "place(1, 2)"), "calls")}


def test_self_reads_in_a_function_patched_onto_an_upstream_class_are_uses_of_that_class(tmp_path: Path) -> None:
    before = {"up/__init__.py": "", "up/layer.py": '''
        class Attention:
            def __init__(self):
                self.use_output = True
                self.scale = 1.0

            def forward(self, q):
                return q
        '''}
    after = {"up/layer.py": '''
        class Attention:
            def __init__(self):
                self.scale = 1.0

            def forward(self, q):
                return q
        '''}
    downstream = '''
        from up import layer


        def patched_forward(self, q):
            if self.use_output:
                return q * self.scale
            return q


        layer.Attention.forward = patched_forward
        '''
    facts, found = impacts(tmp_path, before, after, {"ds/__init__.py": "", "ds/attn.py": downstream})
    assert ("attribute", "Attention.use_output") in {(f.kind, f.symbol) for f in facts}
    assert flagged(found) == {("ds/attn.py", line(downstream, "if self.use_output"), "calls")}
