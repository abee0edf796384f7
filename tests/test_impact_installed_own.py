"""An attribute a downstream sets itself, in a function it installs on an upstream class (a replaced ``__init__``),
is its own: upstream dropping the same name from its class breaks no read of it in the downstream's other installed
functions (issue 36: vllm-gaudi's hetero NIXL connector replaces ``NixlConnectorWorker.__init__`` and
``register_kv_caches``, which set ``block_window_per_layer`` and ``seen_base_addresses``; vLLM 0.18.1 dropped
both from its own class and each read was flagged). Real git repositories, the downstream indexed from its
checkout."""

from __future__ import annotations

from tests.impact_support import upstream_impacts

WORKER = ("class Worker:\n    def __init__(self, config):\n        self.config = config\n"
          "        self.window = []\n        self.addresses = []\n        self.layers = 2\n\n"
          "    def register(self, caches):\n        self.addresses = list(caches)\n")
NEW_WORKER = "class Worker:\n    def __init__(self, config):\n        self.config = config\n\n" \
             "    def register(self, caches):\n        return list(caches)\n"
DOWNSTREAM = {"ds/connector.py": "from up.worker import Worker\n\n\n"
                                 "def worker_init(self, config):\n    self.config = config\n    self.window = []\n\n\n"
                                 "def register(self, caches):\n    self.addresses = list(caches)\n"
                                 "    self.window.append(len(caches))\n\n\n"
                                 "def read_blocks(self):\n    return self.addresses, self.window, self.layers\n\n\n"
                                 "Worker.__init__ = worker_init\nWorker.register = register\n"
                                 "Worker.read_blocks = read_blocks\n"}


def test_attributes_the_downstreams_installed_functions_set_are_its_own(tmp_path):
    before = {"up/__init__.py": "", "up/worker.py": WORKER}
    impacts = upstream_impacts(tmp_path, before, {"up/worker.py": NEW_WORKER}, DOWNSTREAM)
    breaks = sorted((i.line, i.symbol) for i in impacts if i.severity == "breaks")
    # window and addresses are set by worker_init and register (installed on Worker too): only layers, which
    # upstream's __init__ set and no installed function does, is a read that breaks
    assert breaks == [(15, "up.worker.Worker.layers")]
