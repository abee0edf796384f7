"""A downstream class handed to the upstream by its dotted path in a string (issue 36): ``worker_cls =
"ds.worker.MyWorker"``, a class that subclasses nothing of the upstream's and that the upstream calls by its
methods' names (an RPC ``collective_rpc("profile", args=(…))``). Its methods meet the facts of the class the
upstream expects in that slot (the type the slot's consumer resolves it as, or a class the upstream puts there
itself) as overrides would. The upstream's change is committed in a real git repository and read with its tree."""

from __future__ import annotations

import textwrap
from pathlib import Path

from prdigest.connect.impact.index import REGISTERED, resolve_uses, summarize
from prdigest.connect.impact.match import UseTable, match_changes
from prdigest.connect.impact.summary_cache import decode, encode
from prdigest.kernel.models import Change, Impact
from tests.impact_support import upstream_facts

UP = ("up",)
BASE = {
    "up/__init__.py": "",
    "up/config.py": 'class ParallelConfig:\n    worker_cls: str = "auto"\n',
    # the consumer: it resolves the slot as a WorkerBase
    "up/wrapper.py": "from up.base import WorkerBase\n\n\ndef resolve(name):\n    return name\n\n\n"
                     "def init_worker(config, kwargs):\n"
                     "    worker_class: type[WorkerBase] = resolve(config.worker_cls)\n"
                     "    return worker_class(**kwargs)\n",
    "up/base.py": "class WorkerBase:\n    def compile_or_warm_up_model(self) -> None:\n"
                  "        raise NotImplementedError\n\n    def load_model(self) -> None:\n"
                  "        raise NotImplementedError\n",
    # a class the upstream puts in the slot itself, by its dotted path
    "up/gpu.py": "from up.base import WorkerBase\n\n\nclass Worker(WorkerBase):\n"
                 "    def profile(self, is_start=True):\n        return is_start\n\n"
                 "    def compile_or_warm_up_model(self) -> None:\n        return None\n",
    "up/platform.py": "def check_and_update_config(parallel_config):\n"
                      '    parallel_config.worker_cls = "up.gpu.Worker"\n',
    "up/executor.py": "class Executor:\n    def collective_rpc(self, method, args=()):\n        return []\n\n"
                      "    def profile(self, is_start=True):\n"
                      '        self.collective_rpc("profile", args=(is_start,))\n',
    # another class with a method of the same name that no slot expects
    "up/engine.py": "class Engine:\n    def load_model(self) -> None:\n        return None\n",
}
AFTER = {
    # a new hook every worker must now have
    "up/base.py": BASE["up/base.py"].replace("compile_or_warm_up_model(self) -> None",
                                             "compile_or_warm_up_model(self) -> float")
                  + "\n    def sleep(self, level: int = 1) -> None:\n        raise NotImplementedError\n",
    "up/gpu.py": BASE["up/gpu.py"].replace("def profile(self, is_start=True):",
                                           "def profile(self, is_start=True, profile_prefix=None):")
                                  .replace("compile_or_warm_up_model(self) -> None:\n        return None",
                                           "compile_or_warm_up_model(self) -> float:\n        return 0.0"),
    "up/executor.py": BASE["up/executor.py"].replace("def profile(self, is_start=True):",
                                                     "def profile(self, is_start=True, profile_prefix=None):")
                                            .replace("args=(is_start,)", "args=(is_start, profile_prefix)"),
    "up/engine.py": BASE["up/engine.py"].replace("load_model(self) -> None", "load_model(self, strict=False) -> None"),
}
DOWNSTREAM = {
    "ds/__init__.py": "",
    "ds/platform.py": "from up.config import ParallelConfig\n\n\n"
                      "def check_and_update_config(parallel_config: ParallelConfig) -> None:\n"
                      "    parallel_config.worker_cls = \\\n"
                      '        "ds.worker.MyWorker"\n',
    "ds/worker.py": "class MyWorker:\n"
                    "    def profile(self, is_start: bool = True):\n        return is_start\n\n"
                    "    def compile_or_warm_up_model(self) -> None:\n        return None\n\n"
                    "    def load_model(self) -> None:\n        return None\n",
    # not registered anywhere: a duck-typed class upstream never gets
    "ds/other.py": "class Loose:\n    def profile(self, is_start=True):\n        return is_start\n",
}


def _facts(tmp_path: Path) -> list[Change]:
    return upstream_facts(tmp_path, BASE, AFTER, UP)


def _matched(facts: list[Change], downstream: dict[str, str] = DOWNSTREAM) -> list[Impact]:
    uses = resolve_uses([summarize(p, textwrap.dedent(t), UP) for p, t in downstream.items()], UP)
    return match_changes(facts, UseTable.of("ds", uses, UP), UP)


def test_the_facts_say_which_slot_expects_their_class(tmp_path: Path) -> None:
    got = {(f.kind, f.symbol): f.registered for f in _facts(tmp_path) if f.kind in ("signature", "returns")}
    # WorkerBase: the consumer's ``type[WorkerBase]``; Worker: upstream puts "up.gpu.Worker" there itself; Engine
    # and Executor fill no slot
    assert got[("returns", "WorkerBase.compile_or_warm_up_model")] == ("worker_cls",)
    assert got[("signature", "Worker.profile")] == ("worker_cls",)
    # the same return change on Worker(WorkerBase) is said of the most general class of the slot only
    assert got[("returns", "Worker.compile_or_warm_up_model")] == ()
    assert got[("signature", "Engine.load_model")] == ()
    assert got[("signature", "Executor.profile")] == ()


def test_a_method_called_by_its_name_in_a_string_passes_its_arguments(tmp_path: Path) -> None:
    profile = {f.symbol: f for f in _facts(tmp_path) if f.kind == "signature" and f.symbol.endswith(".profile")}
    # ``collective_rpc("profile", args=(is_start, profile_prefix))`` runs on the workers: it passes the new one
    assert profile["Worker.profile"].passed == ("profile_prefix",)
    # not on the executor's own class, which makes the call
    assert profile["Executor.profile"].passed == ()


def test_a_registered_duck_typed_class_breaks_as_an_override(tmp_path: Path) -> None:
    impacts = _matched(_facts(tmp_path))
    got = sorted((i.path, i.line, i.symbol, i.severity) for i in impacts)
    assert got == [
        ("ds/worker.py", 1, "up.base.WorkerBase.sleep", "check"),  # a new hook it does not define
        ("ds/worker.py", 2, "up.gpu.Worker.profile", "breaks"),
        ("ds/worker.py", 5, "up.base.WorkerBase.compile_or_warm_up_model", "breaks"),
    ]
    assert all("registered as worker_cls" in i.fact for i in impacts)
    assert [i.how for i in impacts if i.severity == "breaks"] == ["overrides", "overrides"]
    # the loose class (never registered) and MyWorker.load_model (Engine's, no slot's) are not flagged


def test_a_registered_class_that_subclasses_the_upstream_is_matched_through_its_base_only(tmp_path: Path) -> None:
    downstream = {**DOWNSTREAM, "ds/worker.py": "from up.gpu import Worker\n\n\n" + DOWNSTREAM["ds/worker.py"]
                  .replace("class MyWorker:", "class MyWorker(Worker):")}
    impacts = _matched(_facts(tmp_path), downstream)
    assert impacts and not any("registered as" in i.fact for i in impacts)


def test_a_registered_class_that_already_fits_is_not_flagged(tmp_path: Path) -> None:
    fitted = DOWNSTREAM["ds/worker.py"].replace("def profile(self, is_start: bool = True):",
                                                "def profile(self, is_start: bool = True, profile_prefix=None):")
    fitted = fitted.replace("compile_or_warm_up_model(self) -> None:\n        return None",
                            "compile_or_warm_up_model(self) -> float:\n        return 0.0")
    fitted += "\n    def sleep(self, level: int = 1) -> None:\n        return None\n"
    # (Worker's changed body is its own implementation, which MyWorker replaces whole: not said either)
    assert _matched(_facts(tmp_path), {**DOWNSTREAM, "ds/worker.py": fitted}) == []


def test_a_keyword_or_a_dict_key_registers_as_an_attribute_does_and_a_cached_summary_keeps_it() -> None:
    platform = ("def options(make):\n"
                '    make(worker_cls="ds.worker.MyWorker")\n'
                '    return {"sd_worker_cls": "ds.worker.MyWorker", "name": "ds.worker.Missing"}\n')
    summary = summarize("ds/platform.py", platform, UP)
    assert summary.registers == [("worker_cls", "ds.worker.MyWorker", 2), ("sd_worker_cls", "ds.worker.MyWorker", 3),
                                 ("name", "ds.worker.Missing", 3)]
    assert decode(encode(summary), "ds/platform.py") == summary
    files = [summarize(p, textwrap.dedent(t), UP) for p, t in {**DOWNSTREAM, "ds/platform.py": platform}.items()]
    registered = {(u.symbol, u.how, u.local) for u in resolve_uses(files, UP) if u.symbol.startswith(REGISTERED)}
    # each slot of the class's own, its methods as overrides; a path naming no class of the downstream: nothing
    assert ("<registered>.worker_cls", "subclasses", "MyWorker") in registered
    assert ("<registered>.sd_worker_cls.profile", "overrides", "MyWorker") in registered
    assert not any(".name" in symbol for symbol, _, _ in registered)
