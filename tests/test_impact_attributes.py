"""Breaks through the attributes of instances and the types methods return: an upstream class that loses a data
attribute (a dataclass field, an enum member, ``self.x``), whose ``__init__`` now sets one its own code reads, or
whose method now returns another type. The facts engine reads them from the two versions of the changed files;
the index records the attributes the downstream reads on objects of unknown type (by name) and which of its
``__init__`` overrides never call the base's. Real git repositories made here; the downstream is indexed from
its files."""

from __future__ import annotations

from pathlib import Path

from prdigest.collect.facts.pyapi import ATTRIBUTE_GONE
from prdigest.connect.impact.index import resolve_uses, summarize
from prdigest.connect.impact.match import UseTable, match_changes
from prdigest.kernel.factlines import fact_line
from tests.impact_support import facts_between

UP = ("up",)
BEFORE = {
    "up/__init__.py": "",
    "up/state.py": '''
        import enum
        from dataclasses import dataclass
        from typing import Optional


        @dataclass
        class Meta:
            max_tokens: int
            num_tokens: int


        class Other:
            def __init__(self):
                self.width = 1
                self.speed = 2


        class Status(enum.Enum):
            WAITING = 1
            RUNNING = 2
            _HIDDEN = 3


        class Worker:
            def warm_up(self) -> float:
                return 0.0

            def name(self) -> Optional[str]:
                return None

            def size(self) -> int:
                return 0


        class Batch:
            def __init__(self, n):
                self.n = n

            def total(self):
                return self.n

            def run(self):
                while self._drain():
                    pass

            def _drain(self):
                return False


        class DPBatch(Batch):
            def notify(self):
                return None
        ''',
    "up/norm.py": '''
        class Gated:
            def __init__(self, size, eps=1e-6, activation="swish"):
                self.size = size
        ''',
    "up/model.py": '''
        from other.lib import Plain
        from .norm import Gated


        class Model:
            def __init__(self):
                self.norm = Gated(4, eps=1e-5)
                self.plain = Plain(4)
        ''',
}
AFTER = {
    "up/state.py": '''
        import enum
        from dataclasses import dataclass


        @dataclass
        class Meta:
            num_tokens: int


        class Other:
            def __init__(self):
                self.height = 1


        class Car:
            def __init__(self):
                self.speed = 3


        class Status(enum.Enum):
            QUEUED = 1
            RUNNING = 2


        class Times:
            pass


        class Worker:
            def warm_up(self) -> Times:
                return Times()

            def name(self) -> str | None:
                return None

            def size(self) -> int | str:
                return 0


        class Batch:
            def __init__(self, n):
                self.n = n
                self.count = 0
                self.unused = 1
                self.blocking = True
                self.address = "a"
                self._ticks = 1

            def total(self):
                return self.n + self.count

            def run(self):
                while self._drain():
                    pass

            def _drain(self):
                return self.blocking and self._ticks > 0


        class DPBatch(Batch):
            def notify(self):
                return self.address
        ''',
    "up/model.py": '''
        from other.lib import Plain
        from .norm import Gated


        class Model:
            def __init__(self):
                self.norm = Gated(4, eps=1e-5, activation="silu")
                self.plain = Plain(4, activation="silu")
        ''',
}
DOWNSTREAM = {
    "ds/__init__.py": "",
    "ds/use.py": '''from up.state import Batch, Status, Worker


def pad(ctx):
    return ctx.meta.max_tokens + 1


def speed_of(o):
    return o.speed


def width_of(o):
    return o.width


class Box:
    def __init__(self):
        self.width = 3


def waiting(r):
    return r.status == Status.WAITING


def hidden(r):
    return r.status == Status._HIDDEN


class NPUWorker(Worker):
    def warm_up(self):
        return 1.0

    def name(self):
        return "npu"

    def size(self):
        return 1


class NPUBatch(Batch):
    def __init__(self, n):
        self.n = n


class GoodBatch(Batch):
    def __init__(self, n):
        super().__init__(n)


class SetsBatch(Batch):
    def __init__(self, n):
        self.n = n
        self.count = 0


class LoopBatch(Batch):
    def __init__(self, n):
        self.n = n
        self.count = 0

    def run(self):
        return None
''',
    "ds/norm.py": '''from up.norm import Gated


class NPUGated(Gated):
    def __init__(self, size, eps=1e-6):
        super().__init__(size, eps)


class TakesGated(Gated):
    def __init__(self, size, eps=1e-6, activation="swish"):
        super().__init__(size, eps, activation)


class AnyGated(Gated):
    def __init__(self, size, **kwargs):
        super().__init__(size, **kwargs)
''',
}
USE = "ds/use.py"


def _line(marker: str, after: int = 0) -> int:
    return next(i for i, text in enumerate(DOWNSTREAM[USE].splitlines(), 1) if marker in text and i > after)


def _facts(tmp_path: Path):
    return facts_between(tmp_path, BEFORE, AFTER, UP)


def _uses():
    return resolve_uses([summarize(p, t, UP) for p, t in DOWNSTREAM.items()], UP)


def _impacts(facts):
    return {(i.line, i.symbol, i.severity) for i in match_changes(facts, UseTable.of("ds", _uses(), UP), UP)
            if i.fact.startswith(("attribute", "returns"))}


def test_the_facts_name_attributes_removed_and_added_and_return_types(tmp_path):
    found = _facts(tmp_path)
    facts = {(f.kind, f.symbol): f.detail for f in found if f.kind in ("attribute", "returns")}
    assert facts == {
        ("attribute", "Meta.max_tokens"): "removed" + ATTRIBUTE_GONE,
        ("attribute", "Other.width"): "removed" + ATTRIBUTE_GONE,
        # Car keeps a speed: an ``o.speed`` may be its own
        ("attribute", "Other.speed"): "removed",
        ("attribute", "Status.WAITING"): "removed" + ATTRIBUTE_GONE,
        # read by Batch.total; ``unused`` is set and never read, so upstream relies on nothing; nor ``address``,
        # read only by DPBatch (a sibling of any downstream subclass)
        ("attribute", "Batch.count"): "added",
        ("attribute", "Batch.blocking"): "added",
        # private, but a subclass that never runs Batch.__init__ lacks it all the same
        ("attribute", "Batch._ticks"): "added",
        ("returns", "Worker.warm_up"): "float→Times",
        ("returns", "Worker.size"): "int→int | str",
    }  # private Status._HIDDEN says nothing; Optional[str] → str | None is the same type spelled otherwise
    # where upstream reads what __init__ now sets: a private helper stands for the class's methods calling it
    assert {f.symbol: f.callers for f in found if f.kind == "attribute" and f.detail == "added"} == {
        "Batch.count": ("Batch.total",), "Batch.blocking": ("Batch.run",), "Batch._ticks": ("Batch.run",)}
    lines = {fact_line(f, "en") for f in found if f.kind in ("attribute", "returns")
             and f.symbol in ("Meta.max_tokens", "Worker.warm_up")}
    assert lines == {"removed attribute `Meta.max_tokens`",
                     "return type of `Worker.warm_up` changed from `float` to `Times`"}


def test_the_index_reads_attributes_by_name_but_not_the_downstreams_own():
    by_name = {u.symbol for u in _uses() if u.how == "attribute"}
    assert {".max_tokens", ".meta", ".speed", ".status"} <= by_name
    # ``width`` is an attribute the downstream sets itself (Box); ``n`` and ``count`` too
    assert not by_name & {".width", ".n", ".count"}


def test_removed_attributes_added_ones_and_return_types_hit_the_downstream(tmp_path):
    assert _impacts(_facts(tmp_path)) == {
        # read on an object of unknown type, by name: no upstream class keeps max_tokens
        (_line("ctx.meta.max_tokens"), "up.state.Meta.max_tokens", "breaks"),
        # an enum member read through the class's name
        (_line("Status.WAITING"), "up.state.Status.WAITING", "breaks"),
        # the override returns a float where upstream now reads a Times; a widened type only asks for a check
        (_line("def warm_up"), "up.state.Worker.warm_up", "breaks"),
        (_line("def size"), "up.state.Worker.size", "check"),
        # NPUBatch's own __init__ never sets count, which Batch.total reads
        (_line("def __init__", _line("class NPUBatch")), "up.state.Batch.count", "breaks"),
        # and Batch.run, which NPUBatch inherits, reads blocking (through _drain)
        (_line("def __init__", _line("class NPUBatch")), "up.state.Batch.blocking", "breaks"),
        (_line("def __init__", _line("class SetsBatch")), "up.state.Batch.blocking", "breaks"),
        (_line("def __init__", _line("class NPUBatch")), "up.state.Batch._ticks", "breaks"),
        (_line("def __init__", _line("class SetsBatch")), "up.state.Batch._ticks", "breaks"),
    }  # not: o.speed (Car keeps one), o.width (the downstream's own), GoodBatch (super), SetsBatch's count (it
    # sets it), LoopBatch (sets count, runs its own loop: upstream never reads its blocking)


def test_a_keyword_upstream_now_passes_to_a_constructor_breaks_an_override_that_does_not_take_it(tmp_path):
    facts = _facts(tmp_path)
    # Gated resolved through the relative import; Plain is another package's class, eps was passed before
    assert {(f.symbol, f.path, f.detail) for f in facts if f.kind == "passes"} == {
        ("Gated.__init__", "up/norm.py", "activation")}
    assert fact_line(next(f for f in facts if f.kind == "passes"), "en") == \
        "upstream now passes `activation` to `Gated.__init__`"
    found = match_changes(facts, UseTable.of("ds", _uses(), UP), UP)
    norm = DOWNSTREAM["ds/norm.py"].splitlines()
    assert {(i.path, i.line, i.severity) for i in found if i.fact.startswith("passes")} == {
        ("ds/norm.py", norm.index("    def __init__(self, size, eps=1e-6):") + 1, "breaks")}
