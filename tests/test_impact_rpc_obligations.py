"""A method the upstream now calls by name on every worker (``collective_rpc("reset_encoder_cache")``) that the
workers' base does not define (vLLM 0.16.0: only the GPU ``Worker`` did; vllm-ascend's ``NPUWorker(WorkerBase)``
had to add it): an obligation of every subclass of the base. Real git repositories made here (the upstream's
tree read as a ``--git`` run reads it); the downstream is indexed from its checkout."""

from __future__ import annotations

from pathlib import Path

from tests.impact_support import facts_between, match_downstream, upstream_facts

UP = ("up",)
EXECUTOR = '''
class Executor:
    def collective_rpc(self, method, args=()):
        return [getattr(w, method)(*args) for w in self.workers]

    def start(self):
        self.collective_rpc("init_device")
        self.collective_rpc("load_model")
        self.collective_rpc("determine_available_memory")
'''
BEFORE = {
    "up/__init__.py": "",
    "up/worker_base.py": '''
class WorkerBase:
    def init_device(self):
        raise NotImplementedError

    def load_model(self):
        raise NotImplementedError

    def determine_available_memory(self):
        raise NotImplementedError
''',
    "up/gpu_worker.py": '''
from up.worker_base import WorkerBase


class Worker(WorkerBase):
    def init_device(self):
        return 1
''',
    "up/executor.py": EXECUTOR,
}
AFTER = {
    "up/gpu_worker.py": BEFORE["up/gpu_worker.py"] + '''
    def reset_encoder_cache(self):
        return None
''',
    "up/executor.py": EXECUTOR + '''
    def reset_encoder_cache(self):
        self.collective_rpc("reset_encoder_cache")
''',
}
DOWNSTREAM = {
    "ds/worker.py": '''from up.worker_base import WorkerBase


class NPUWorker(WorkerBase):
    def init_device(self):
        return 2


class ReadyWorker(WorkerBase):
    def reset_encoder_cache(self):
        return None
''',
}


def _facts(tmp_path: Path, *, with_tree: bool = True):
    return upstream_facts(tmp_path, BEFORE, AFTER, UP) if with_tree else facts_between(tmp_path, BEFORE, AFTER, UP)


def test_a_method_now_called_by_name_on_every_worker_obliges_the_bases_subclasses(tmp_path: Path):
    facts = _facts(tmp_path)
    found = [f for f in facts if f.kind == "abstract"]
    assert [(f.symbol, f.path) for f in found] == [("WorkerBase.reset_encoder_cache", "up/worker_base.py")]
    assert 'collective_rpc("reset_encoder_cache")' in found[0].detail
    impacts = match_downstream(tmp_path, facts, DOWNSTREAM)
    lines = DOWNSTREAM["ds/worker.py"].splitlines()
    assert {(i.path, i.line, i.severity) for i in impacts if i.symbol.endswith("WorkerBase")} == {
        ("ds/worker.py", lines.index("class NPUWorker(WorkerBase):") + 1, "breaks")}  # ReadyWorker defines it


def test_without_the_tree_nothing_is_said(tmp_path: Path):
    assert not [f for f in _facts(tmp_path, with_tree=False) if f.kind == "abstract"]
