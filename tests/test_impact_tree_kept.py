"""An attribute removed from one upstream class is not "gone" by name while another class of the upstream's tree,
in a file the commit did not touch, still keeps the name (issue 36: vLLM 0.18.1 dropped ``EngineCore.is_ec_producer``
while ``ECTransferConfig.is_ec_producer`` stayed, and tpu-inference's ``ec_transfer_config.is_ec_producer`` was
flagged as broken). Real git repositories: the upstream read with its tree, the downstream indexed from its
checkout."""

from __future__ import annotations

from tests.impact_support import upstream_facts, upstream_impacts

CORE = ("class EngineCore:\n    def __init__(self, config):\n        self.config = config\n"
        "        self.is_ec_producer = config.ec.is_ec_producer\n        self.is_pooling = False\n"
        "        self.legacy_mode = 1\n\n    def step(self):\n        return self.config\n")
NEW_CORE = "class EngineCore:\n    def __init__(self, config):\n        self.config = config\n\n" \
           "    def step(self):\n        return self.config\n"
UNCHANGED = {"up/__init__.py": "",
             "up/config/__init__.py": "",
             "up/config/ec.py": "class ECConfig:\n    role = 'producer'\n\n    @property\n"
                                "    def is_ec_producer(self):\n        return self.role == 'producer'\n",
             "up/runner.py": "class Runner:\n    def __init__(self, pooling):\n        self.is_pooling = pooling\n"}
DOWNSTREAM = {"ds/executor.py": "def uses_sampler(config):\n    return not config.ec.is_ec_producer\n\n\n"
                                "def pooling(core):\n    return core.is_pooling\n\n\n"
                                "def legacy(core):\n    return core.legacy_mode\n"}


def test_a_name_another_class_of_the_tree_keeps_is_no_break_by_name(tmp_path):
    before = {**UNCHANGED, "up/engine.py": CORE}
    facts = [f for f in upstream_facts(tmp_path / "f", before, {"up/engine.py": NEW_CORE})
             if f.kind == "attribute"]
    # all three are removed from EngineCore; only legacy_mode is kept by no class of the tree
    assert sorted((f.symbol, f.detail) for f in facts) == [
        ("EngineCore.is_ec_producer", "removed"), ("EngineCore.is_pooling", "removed"),
        ("EngineCore.legacy_mode", "removed (no class of the changed files keeps it)")]
    impacts = upstream_impacts(tmp_path / "i", before, {"up/engine.py": NEW_CORE}, DOWNSTREAM)
    assert sorted((i.line, i.severity) for i in impacts) == [(10, "breaks")]
