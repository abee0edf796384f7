"""A base method's return type replaced by a value type (``-> float`` → ``-> Times``, a NamedTuple upstream now
reads the fields of) against downstream overrides that return nothing, read from the upstream's whole tree and
from the PR's patch alone, each on real git repositories; beside them the overrides that must not break."""

from __future__ import annotations

from pathlib import Path

from prdigest.collect.facts import Surface, patch_facts
from prdigest.connect.impact.index import USED, resolve_uses, summarize
from prdigest.kernel.models import Impact
from tests.git_support import commit_week
from tests.impact_support import line_in as _line
from tests.impact_support import match_downstream
from tests.impact_support import upstream_impacts as _impacts

UP = ("up",)

WORKER = '''class Worker:
    def warm_up(self) -> float:
        """Compile and warm up.

        Returns:
            the seconds it took
        """
        raise NotImplementedError
'''
#: the base now returns a NamedTuple whose fields its executor reads
TIMES = WORKER.replace("class Worker:", "from typing import NamedTuple\n\n\nclass Times(NamedTuple):\n"
                       "    language_model: float\n    encoder: float\n\n\nclass Worker:").replace(
    "-> float:", "-> Times:")
#: the base now may return nothing: an override returning nothing still fits
OPTIONAL = WORKER.replace("-> float:", "-> float | None:")

MINE = '''from up.worker import Times, Worker


class NoneTyped(Worker):
    def warm_up(self) -> None:
        """Warm up; return the model to eval mode."""
        self.ready = True


class Bare(Worker):
    def warm_up(self):
        self.ready = True
        return


class Old(Worker):
    def warm_up(self) -> float:
        return 0.0


class New(Worker):
    def warm_up(self) -> Times:
        return Times(0.0, 0.0)


class Unknown(Worker):
    def warm_up(self):
        return self.runner.warm_up()
'''


def _returns(found: list[Impact]) -> set[tuple[str, str]]:
    """(class, severity) of each ``returns`` impact, the class read off the line above the method."""
    lines = MINE.splitlines()
    return {(lines[i.line - 2].split("(")[0].removeprefix("class "), i.severity) for i in found
            if i.fact.startswith("returns")}


#: what nothing returned breaks, what returns the new type fits, what cannot be read stays as it was
EXPECTED = {("NoneTyped", "breaks"), ("Bare", "breaks"), ("Old", "breaks"), ("Unknown", "breaks")}


def test_an_override_returning_nothing_breaks_when_the_base_now_returns_a_value(tmp_path: Path) -> None:
    found = _impacts(tmp_path, {"up/__init__.py": "", "up/worker.py": WORKER}, {"up/worker.py": TIMES},
                     {"ds/worker.py": MINE})
    assert _returns(found) == EXPECTED
    [said] = [i.fact for i in found if i.fact.startswith("returns") and i.line == _line(MINE, "class Bare") + 1]
    assert said.endswith("yours returns nothing")


def test_an_override_returning_nothing_breaks_from_the_patch_alone(tmp_path: Path) -> None:
    [pr] = commit_week(tmp_path / "upstream", {"up/__init__.py": "", "up/worker.py": WORKER},
                       {1: ("Return the compilation times", {"up/worker.py": TIMES})})
    facts = patch_facts(pr, Surface(packages=UP))
    assert [(f.symbol, f.before, f.after) for f in facts if f.kind == "returns"] == [("Worker.warm_up", "float",
                                                                                      "Times")]
    assert _returns(match_downstream(tmp_path, facts, {"ds/worker.py": MINE})) == EXPECTED


def test_an_override_returning_nothing_fits_a_new_type_that_admits_none(tmp_path: Path) -> None:
    found = _impacts(tmp_path, {"up/__init__.py": "", "up/worker.py": WORKER}, {"up/worker.py": OPTIONAL},
                     {"ds/worker.py": MINE})
    assert {c for c, s in _returns(found)} & {"NoneTyped", "Bare", "New"} == set()


#: returns something (a conditional starting with None), and nothing: the narrowed type says which needs a fix
WRAPPED = '''from up.worker import Worker


class Wrapped(Worker):
    def warm_up(self):
        return None if self.runner is None else self.runner.warm_up()


class Quiet(Worker):
    def warm_up(self):
        self.ready = True
        return None
'''


def test_a_narrowed_type_breaks_only_the_override_returning_nothing(tmp_path: Path) -> None:
    wide = WORKER.replace("-> float:", "-> float | tuple[float, float]:")
    found = _impacts(tmp_path, {"up/__init__.py": "", "up/worker.py": wide}, {"up/worker.py": WORKER},
                     {"ds/worker.py": WRAPPED})
    assert sorted((i.line, i.severity) for i in found if i.fact.startswith("returns")) == [
        (_line(WRAPPED, "class Wrapped") + 1, "check"), (_line(WRAPPED, "class Quiet") + 1, "breaks")]


SCHEDULER = '''class Scheduler:
    def _update_waiting(self, request) -> bool:
        """Cache the received blocks; whether the request is ready."""
        if request not in self.finished:
            return False
        self.finished.remove(request)
        return True
'''
#: the readiness check moved to the caller: the method now only updates, and returns nothing
PROMOTED = '''class Scheduler:
    def _update_waiting(self, request) -> None:
        """Cache the received blocks."""
        self.finished.remove(request)

    def _try_promote(self, request) -> bool:
        if request not in self.finished:
            return False
        self._update_waiting(request)
        return True
'''
#: what a subclass does with the value: assigns and tests it, tests it, returns it; or calls it for its effect
CALLERS = '''from up.sched import Scheduler


class Assigns(Scheduler):
    def schedule(self, request):
        is_ready = self._update_waiting(request)
        if is_ready:
            self.run(request)


class Tests(Scheduler):
    def schedule(self, request):
        if not self._update_waiting(request):
            return


class Returns(Scheduler):
    def ready(self, request):
        return self._update_waiting(request)


class Adapted(Scheduler):
    def schedule(self, request):
        if request in self.finished:
            self._update_waiting(request)
'''


def _using(found: list[Impact]) -> list[tuple[int, str]]:
    return sorted((i.line, i.severity) for i in found if i.fact.startswith("returns"))


def test_a_call_using_the_value_of_a_method_that_now_returns_nothing_breaks(tmp_path: Path) -> None:
    found = _impacts(tmp_path, {"up/__init__.py": "", "up/sched.py": SCHEDULER}, {"up/sched.py": PROMOTED},
                     {"ds/sched.py": CALLERS})
    assert _using(found) == [(_line(CALLERS, "is_ready = "), "breaks"), (_line(CALLERS, "if not self."), "breaks"),
                             (_line(CALLERS, "return self._update"), "breaks")]
    assert all("your call uses its value" in i.fact for i in found if i.fact.startswith("returns"))


def test_a_call_using_the_value_breaks_from_the_patch_alone(tmp_path: Path) -> None:
    [pr] = commit_week(tmp_path / "upstream", {"up/__init__.py": "", "up/sched.py": SCHEDULER},
                       {1: ("Promote waiting requests in one place", {"up/sched.py": PROMOTED})})
    facts = patch_facts(pr, Surface(packages=UP))
    assert [(f.symbol, f.before, f.after) for f in facts if f.kind == "returns"] == [
        ("Scheduler._update_waiting", "bool", "None")]
    assert [line for line, _ in _using(match_downstream(tmp_path, facts, {"ds/sched.py": CALLERS}))] == [
        _line(CALLERS, "is_ready = "), _line(CALLERS, "if not self."), _line(CALLERS, "return self._update")]


def test_a_caller_of_a_method_that_now_returns_a_narrower_value_is_not_flagged(tmp_path: Path) -> None:
    narrower = SCHEDULER.replace("-> bool:", "-> bool | None:")
    found = _impacts(tmp_path, {"up/__init__.py": "", "up/sched.py": narrower}, {"up/sched.py": SCHEDULER},
                     {"ds/sched.py": CALLERS})
    assert _using(found) == []


#: which calls the index says use their value: every call but a statement of its own (awaited or not)
USES = '''from up.sched import Scheduler, fetch


async def run(s: Scheduler):
    fetch(1)
    await fetch(2)
    x = fetch(3)
    y = await fetch(4)
    print(fetch(5))
    return fetch(6)
'''


def test_the_index_marks_the_calls_whose_value_is_used() -> None:
    uses = resolve_uses([summarize("ds/run.py", USES, UP)], UP)
    used = {u.line: USED in u.detail for u in uses if u.how == "calls" and u.symbol == "up.sched.fetch"}
    assert used == {_line(USES, f"fetch({n})"): n > 2 for n in range(1, 7)}
