"""A hunk whose header names only a method (git's Python driver) is in the class the hunk before it shows, when
that hunk shows the same ``def`` last: a data attribute the method stops setting there is removed from that class,
from patches alone, as from full files (issue 36: vLLM 0.18.1's second hunk of ``OffloadingSpec.__init__`` drops
``self.offloaded_block_size`` and keeps a local of that name; vllm-ascend's subclass reads the attribute). Each row
is an upstream change in a real git repository served as GitHub serves its files."""

from __future__ import annotations

from tests.patch_support import change_of, matched, patch_only

SPEC = "vllm/kv_offload/spec.py"
BODY = "".join(f"        self.step_{n} = {n}\n" for n in range(8))
OLD = ("class OffloadingSpec:\n    \"\"\"Spec.\"\"\"\n\n    def __init__(\n        self, config, groups\n    ):\n"
       "        self.config = config\n" + BODY +
       "        self.gpu_block_size = config.block_size\n        self.offloaded_block_size = int(\n"
       "            config.extra.get('block_size', self.gpu_block_size)\n        )\n\n"
       "    def manager(self):\n        return self.config\n")
NEW_TAIL = ("        self.gpu_block_size = tuple(groups)\n        offloaded_block_size = config.extra.get('block_size')\n"
            "        if offloaded_block_size is not None:\n            self.factor = int(offloaded_block_size)\n\n"
            "    def manager(self):\n        return self.config\n")
NEW = ("class OffloadingSpec:\n    \"\"\"Spec.\"\"\"\n\n    def __init__(self, config, groups):\n"
       "        self.config = config\n" + BODY + NEW_TAIL)
KEPT_HEAD = ("class OffloadingSpec:\n    \"\"\"Spec.\"\"\"\n\n    def __init__(\n        self, config, groups\n    ):\n"
             "        self.config = config\n" + BODY + NEW_TAIL)
USER = {"ds/__init__.py": "",
        "ds/npu.py": "from vllm.kv_offload.spec import OffloadingSpec\n\n\nclass NPUSpec(OffloadingSpec):\n"
                     "    def sizes(self):\n        return self.offloaded_block_size\n"}


def test_an_attribute_dropped_in_a_hunk_that_continues_its_class_breaks_its_read(tmp_path):
    pr = change_of(tmp_path, {SPEC: OLD}, {SPEC: NEW}, python_headers=True)
    removed = [c for c in patch_only(pr) if c.kind == "attribute"]
    # the local of the same name in the method's body declares no attribute
    assert [(c.symbol, c.detail) for c in removed] == [("OffloadingSpec.offloaded_block_size", "removed")]
    assert [(i.line, i.severity) for i in matched(removed, USER)] == [(6, "breaks")]


def test_without_the_hunk_showing_the_class_the_attribute_is_not_claimed(tmp_path):
    # the def line unchanged: one hunk, headed by the method, its class out of sight, and a line still naming it
    pr = change_of(tmp_path, {SPEC: OLD}, {SPEC: KEPT_HEAD}, python_headers=True)
    assert [c for c in patch_only(pr) if c.kind == "attribute"] == []
