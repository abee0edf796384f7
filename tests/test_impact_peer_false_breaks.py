"""The peer's false-break kinds (issue 36), one row each: an upstream change in a real git repository and a
downstream in another, indexed from its checkout as a run reads it. Each row is a use that still works with the
new upstream, so nothing may say ``breaks`` (a ``check`` is allowed where the row says so); the last rows are
the true breaks next to them, so the table cannot pass by flagging nothing."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from prdigest.kernel.models import Impact
from tests.impact_support import facts_between, match_downstream

UP = ("up",)

LAYERS = {"up/__init__.py": "", "up/layers.py": '''
    class Norm:
        def forward(self, x, eps=1e-6):
            return x


    def run(norm, x):
        return norm.forward(x)


    def conv(x, weight, pad_slot_id=-1):
        return x


    def apply(x):
        return conv(x, 1)
    '''}


RUNNER = {"up/__init__.py": "", "up/runner.py": '''
    class Runner:
        def attach(self, config):
            return config

        def _warm(self):
            return self.attach(None)

        def load(self):
            return self.attach(None)
    '''}
#: upstream now passes ``is_profiling`` from its private ``_warm`` only
PROFILING = (("def attach(self, config):", "def attach(self, config, is_profiling=False):"),
             ("return self.attach(None)\n\n    def load", "return self.attach(None, is_profiling=True)\n\n    def load"))
MINE = "from up.runner import Runner\n\n\nclass Mine(Runner):\n    def attach(self, config):\n        return config\n"


def _text(files: dict[str, str | None]) -> dict[str, str | None]:
    return {p: textwrap.dedent(t).lstrip("\n") if t is not None else None for p, t in files.items()}


def _replace(files: dict[str, str | None], path: str, *pairs: tuple[str, str]) -> dict[str, str | None]:
    text = textwrap.dedent(files[path] or "")
    for old, new in pairs:
        assert old in text, old
        text = text.replace(old, new)
    return {path: text}


def peer_impacts(tmp_path: Path, before: dict[str, str | None], after: dict[str, str | None],
                 downstream: dict[str, str]) -> list[Impact]:
    """The impacts of ``before`` → ``after`` (one upstream commit) on a downstream committed in its own repository
    and indexed from that checkout."""
    return match_downstream(tmp_path, facts_between(tmp_path, _text(before), _text(after), UP), downstream)



#: (id, upstream before, upstream after, downstream files, the severity the downstream's only flag may have:
#: "check" or None for no flag at all)
PEERS = [
    pytest.param(
        {"up/__init__.py": "", "up/ops/__init__.py": "from up.ops.norm import RMSNorm\n",
         "up/ops/norm.py": "class RMSNorm:\n    pass\n"},
        {"up/ops/__init__.py": "from up.ops.fused import RMSNorm\n", "up/ops/norm.py": None,
         "up/ops/fused.py": "class RMSNorm:\n    pass\n"},
        {"ds/norm.py": "from up.ops import RMSNorm\n"},
        None, id="a name moved but still importable through its package __init__"),
    pytest.param(
        {"up/__init__.py": "", "up/base.py": "class Base:\n    def warm(self):\n        return 0\n",
         "up/runner.py": "from up.base import Base\n\n\nclass Runner(Base):\n    def warm(self):\n        return 1\n"},
        {"up/base.py": "class Base:\n    def warm(self):\n        return 1\n",
         "up/runner.py": "from up.base import Base\n\n\nclass Runner(Base):\n    pass\n"},
        {"ds/run.py": "from up.runner import Runner\n\n\nclass Mine(Runner):\n    def warm(self):\n"
                      "        return super().warm()\n"},
        "check", id="a method now inherited from a base in another module"),
    pytest.param(
        LAYERS, _replace(LAYERS, "up/layers.py", ("def conv(x, weight, pad_slot_id=-1):",
                                                  "def conv(x, weight, pad_slot_id=-1, *args, **kwargs):")),
        {"ds/use.py": "from up.layers import conv\n\n\ndef go():\n    return conv(1, 2, pad_slot_id=3)\n"},
        None, id="*args and **kwargs added"),
    pytest.param(
        LAYERS, _replace(LAYERS, "up/layers.py", ("def conv(x, weight, pad_slot_id=-1):",
                                                  "def conv(x, *args, **kwargs):")),
        {"ds/use.py": "from up.layers import conv\n\n\ndef go():\n    return conv(1, 2, pad_slot_id=3)\n"},
        "check", id="parameters the new *args and **kwargs still accept"),
    pytest.param(
        LAYERS, _replace(LAYERS, "up/layers.py", ("def forward(self, x, eps=1e-6):", "def forward(self, x, eps=1e-6, "
                                                  "scale=1.0):"), ("norm.forward(x)", "norm.forward(x, scale=2.0)")),
        {"ds/norm.py": "from up.layers import Norm\n\n\nclass Mine(Norm):\n    def forward(self, x, eps=1e-6, "
                       "scale=1.0):\n        return x\n"},
        None, id="an override that already takes the new parameter"),
    pytest.param(
        {"up/__init__.py": "", "up/x.py": "class A:\n    pass\n\n\nclass B:\n    pass\n\n\nclass X(A):\n    pass\n"},
        {"up/x.py": "class A:\n    pass\n\n\nclass B:\n    pass\n\n\nclass X(B):\n    pass\n"},
        {"ds/use.py": "from up.x import X\n\n\ndef make():\n    return X()\n"},
        None, id="a base-class change seen through a plain import"),
    pytest.param(
        {"up/__init__.py": "", "up/graph.py": "class Graphs:\n    def __init__(self, config, draft_tokens):\n"
                                              "        self.config = config\n"},
        {"up/graph.py": "class Graphs:\n    def __init__(self, config, decode_query_len):\n"
                        "        self.config = config\n"},
        {"ds/graph.py": "from up.graph import Graphs\n\n\nclass NPUGraphs(Graphs):\n"
                        "    def __init__(self, config, decode_query_len, speculator):\n"
                        "        super().__init__(config, decode_query_len)\n"},
        # the override fits; its super() call passes by position into the place decode_query_len took: a check
        "check", id="a subclass __init__ that fits the new signature and takes its own extra parameter"),
    pytest.param(
        LAYERS, _replace(LAYERS, "up/layers.py", ("def conv(x, weight, pad_slot_id=-1):",
                                                  "def conv(x, weight, null_block_id=-1):")),
        {"ds/kernels.py": "def conv_npu(x, weight, pad_slot_id=-1):\n    return x\n",
         "ds/patch.py": "import up.layers\n\nfrom ds.kernels import conv_npu\n\nup.layers.conv = conv_npu\n"},
        "check", id="a patch whose function keeps, with a default, a parameter upstream renamed and never passes"),
    pytest.param(
        LAYERS, _replace(LAYERS, "up/layers.py", ("def forward(self, x, eps=1e-6):", "def forward(self, x):")),
        {"ds/norm.py": "from up.layers import Norm\n\n\nclass Mine(Norm):\n    def forward(self, x, eps=1e-6):\n"
                       "        return x * eps\n"},
        "check", id="an override that still takes a dropped parameter and does not pass it on"),
    pytest.param(
        RUNNER, _replace(RUNNER, "up/runner.py", *PROFILING), {"ds/runner.py": MINE},
        "check", id="an override of a method upstream passes a new parameter to only from a private helper"),
    pytest.param(
        LAYERS, _replace(LAYERS, "up/layers.py", ("def conv(x, weight, pad_slot_id=-1):",
                                                  "def conv(x, weight, block, pad_slot_id=-1):")),
        {"ds/use.py": "from up.layers import conv\n\n\ndef go(*args, **kwargs):\n    return conv(*args, **kwargs)\n"},
        "check", id="a call that spreads *args and **kwargs into a function that gained a required parameter"),
    pytest.param(
        LAYERS, _replace(LAYERS, "up/layers.py", ("def conv(x, weight, pad_slot_id=-1):",
                                                  "def conv(x, weight, null_block_id=-1):")),
        {"ds/use.py": "from up.layers import conv\n\n\ndef go():\n    return conv(1, 2, 3)\n"},
        "check", id="a call passing by position a parameter renamed in its place"),
]


@pytest.mark.parametrize(("before", "after", "downstream", "severity"), PEERS)
def test_a_peer_false_break_kind_is_not_a_break(tmp_path: Path, before: dict[str, str | None],
                                                after: dict[str, str | None], downstream: dict[str, str],
                                                severity: str | None) -> None:
    found = peer_impacts(tmp_path, before, after, downstream)
    assert [i for i in found if i.severity == "breaks"] == []
    assert {i.severity for i in found} == ({severity} if severity else set())


#: The true breaks beside those rows: the same shapes, one step further.
BREAKS = [
    pytest.param(
        LAYERS, _replace(LAYERS, "up/layers.py", ("def conv(x, weight, pad_slot_id=-1):",
                                                  "def conv(x, weight, pad_slot_id=-1, null_block_id=-1):"),
                         ("return conv(x, 1)", "return conv(x, 1, null_block_id=0)")),
        {"ds/kernels.py": "def conv_npu(x, weight, pad_slot_id=-1):\n    return x\n",
         "ds/patch.py": "import up.layers\n\nfrom ds.kernels import conv_npu\n\nup.layers.conv = conv_npu\n"},
        "ds/patch.py", "up.layers.conv = conv_npu", id="a patch whose function lacks a parameter upstream now passes"),
    pytest.param(
        LAYERS, _replace(LAYERS, "up/layers.py", ("def forward(self, x, eps=1e-6):", "def forward(self, x):")),
        {"ds/norm.py": "from up.layers import Norm\n\n\nclass Mine(Norm):\n    def forward(self, x, eps=1e-6):\n"
                       "        return super().forward(x, eps)\n"},
        "ds/norm.py", "def forward", id="an override that passes a dropped parameter on to the base"),
    pytest.param(
        {"up/__init__.py": "", "up/graph.py": "class Graphs:\n    def __init__(self, config, draft_tokens):\n"
                                              "        self.config = config\n"},
        {"up/graph.py": "class Graphs:\n    def __init__(self, config, decode_query_len):\n"
                        "        self.config = config\n"},
        {"ds/graph.py": "from up.graph import Graphs\n\n\nclass NPUGraphs(Graphs):\n"
                        "    def __init__(self, config, draft_tokens):\n        super().__init__(config, draft_tokens)\n"},
        "ds/graph.py", "def __init__", id="a subclass __init__ that still requires the dropped parameter"),
    pytest.param(
        {"up/__init__.py": "", "up/sched.py": "class Scheduler:\n    def __init__(self, config, block_size, "
                                              "registry=None):\n        self.config = config\n"},
        {"up/sched.py": "class Scheduler:\n    def __init__(self, config, block_size, hash_block_size=None, "
                        "registry=None):\n        self.config = config\n"},
        {"ds/sched.py": "from up.sched import Scheduler\n\n\nclass Mine(Scheduler):\n"
                        "    def __init__(self, config, block_size, registry=None):\n"
                        "        super().__init__(config, block_size, registry)\n"},
        "ds/sched.py", "super().__init__", id="a super().__init__ call whose positional arguments a new parameter shifts"),
    pytest.param(
        RUNNER, _replace(RUNNER, "up/runner.py", *PROFILING),
        {"ds/runner.py": MINE + "\n    def start(self):\n        return self._warm()\n"},
        "ds/runner.py", "def attach", id="an override of a method a private helper passes to, the helper called"),
    pytest.param(
        RUNNER, _replace(RUNNER, "up/runner.py", *PROFILING[:1],
                         ("return self.attach(None)\n", "return self.attach(None, is_profiling=True)\n")),
        {"ds/runner.py": MINE}, "ds/runner.py", "def attach",
        id="an override of a method upstream passes a new parameter to from a public method"),
]


@pytest.mark.parametrize(("before", "after", "downstream", "path", "marker"), BREAKS)
def test_the_true_break_beside_each_kind_is_still_a_break(tmp_path: Path, before: dict[str, str | None],
                                                         after: dict[str, str | None], downstream: dict[str, str],
                                                         path: str, marker: str) -> None:
    found = peer_impacts(tmp_path, before, after, downstream)
    text = downstream[path].splitlines()
    at = next(n for n, row in enumerate(text, 1) if marker in row)
    assert {(i.path, i.line) for i in found if i.severity == "breaks"} == {(path, at)}
