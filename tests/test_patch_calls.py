"""Keywords the added lines now pass to an upstream constructor, read from patches alone (a real git repository's
diff): a ``passes`` fact, which breaks a downstream subclass whose ``__init__`` does not take them."""

from __future__ import annotations

from tests.patch_support import change_of, matched, patch_only

NORM = "vllm/model_executor/layers/layernorm.py"
MODEL = "vllm/model_executor/models/gdn.py"
NORM_TEXT = '''
    class RMSNormGated:
        def __init__(self, hidden, eps=1e-6, group_size=None, **kwargs):
            self.hidden = hidden
'''
FILLER = "".join(f"        self.x{i} = {i}\n" for i in range(8))
BEFORE = ('''from vllm.model_executor.layers.layernorm import RMSNormGated


class GatedDeltaNet:
    def __init__(self, hidden, eps):
        self.norm = RMSNormGated(
            hidden,
            eps=eps,
            group_size=None,
        )
''' + FILLER + '''        self.other = RMSNormGated(
            hidden,
''' + "".join(f"            # note {i}\n" for i in range(6)) + '''            eps=eps,
        )
''')
# a keyword added to a call opened in sight; eps moved within it (passed before: no news); a keyword added to a
# call whose "(" is above its hunk (out of sight: not read)
AFTER = BEFORE.replace("            eps=eps,\n            group_size=None,\n",
                       "            group_size=None,\n            eps=eps,\n            activation='sigmoid',\n") \
    .replace("            # note 5\n            eps=eps,\n", "            # note 5\n            eps=eps,\n"
             "            norm_before_gate=True,\n") \
    .replace("import RMSNormGated\n", "import RMSNormGated\nimport math\n", 1)  # the import line in sight


def test_a_keyword_an_added_line_passes_to_an_upstream_constructor(tmp_path):
    pr = change_of(tmp_path, {NORM: NORM_TEXT, MODEL: BEFORE}, {NORM: NORM_TEXT, MODEL: AFTER})
    passes = [(c.symbol, c.path, c.detail) for c in patch_only(pr) if c.kind == "passes"]
    assert passes == [("RMSNormGated.__init__", NORM, "activation")]
    downstream = {"ds/__init__.py": "",
                  "ds/norm.py": '''from vllm.model_executor.layers.layernorm import RMSNormGated


class AscendRMSNormGated(RMSNormGated):
    def __init__(self, hidden, eps=1e-6, group_size=None):
        super().__init__(hidden, eps, group_size)


class KwargsNorm(RMSNormGated):
    def __init__(self, hidden, **kwargs):
        super().__init__(hidden, **kwargs)
'''}
    got = {(i.line, i.severity) for i in matched([c for c in patch_only(pr) if c.kind == "passes"], downstream)}
    assert got == {(5, "breaks")}  # the one that takes **kwargs already fits


def test_a_keyword_to_a_class_of_unknown_origin_gives_no_fact(tmp_path):
    before = BEFORE.replace("from vllm.model_executor.layers.layernorm import RMSNormGated\n",
                            "from other.lib import RMSNormGated\n")
    after = AFTER.replace("from vllm.model_executor.layers.layernorm import RMSNormGated\n",
                          "from other.lib import RMSNormGated\n")
    pr = change_of(tmp_path, {MODEL: before}, {MODEL: after})
    assert not [c for c in patch_only(pr) if c.kind == "passes"]


def test_a_call_moved_to_another_file_passes_nothing_new(tmp_path):
    call = ("from vllm.model_executor.layers.layernorm import RMSNormGated\n\n\ndef build(hidden):\n"
            "    return RMSNormGated(\n        hidden,\n        activation='sigmoid',\n    )\n")
    old, new = "vllm/model_executor/models/a.py", "vllm/model_executor/models/b.py"
    pr = change_of(tmp_path, {NORM: NORM_TEXT, old: call, new: "x = 1\n"}, {NORM: NORM_TEXT, old: "x = 1\n", new: call})
    assert not [c for c in patch_only(pr) if c.kind == "passes"]
