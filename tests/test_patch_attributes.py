"""Data attributes removed from a class, read from patches alone (a real git repository's diff with git's Python
hunk headers, as GitHub serves a PR's files): a class attribute whose ``class`` line is one of the hunk's lines,
and an instance attribute a method whose class is out of sight stops setting."""

from __future__ import annotations

from prdigest.collect.facts.pyapi import ATTRIBUTE_GONE
from tests.patch_support import change_of, matched, patch_only

BACKEND = "vllm/attention/backend.py"
BACKEND_BEFORE = '''
    import abc


    def helper(x):
        return x


    class Backend(abc.ABC):
        """A backend."""

        accept_output_buffer: bool = False
        supported: list[str] = ["a"]

        def name(self) -> str:
            return "base"
'''
BACKEND_AFTER = BACKEND_BEFORE.replace("        accept_output_buffer: bool = False\n", "")

LAYER = "vllm/attention/layer.py"
LAYER_BEFORE = '''
    class Attention:
        """A layer."""

        def __init__(
            self,
            backend,
        ):
            self.backend = backend
            self.scale = 1.0
            self.heads = 8
            self.use_output = backend.accept_output_buffer
            self.kv_cache = None
            self.dtype = None

        def forward(
            self,
            query,
        ):
            if self.use_output:
                return query
            return None
'''
LAYER_AFTER = LAYER_BEFORE.replace("            self.use_output = backend.accept_output_buffer\n", "").replace(
    "            if self.use_output:\n                return query\n", "            return query\n")

DOWNSTREAM = {"ds/__init__.py": "",
              "ds/backend.py": '''from vllm.attention.backend import Backend


class NPUBackend(Backend):
    @property
    def accept_output_buffer(self) -> bool:
        return True
''',
              "ds/attention.py": '''def forward_oot(layer, query):
    if layer.use_output:
        return query
    return None
'''}


def test_removed_attributes_are_read_from_patches(tmp_path):
    pr = change_of(tmp_path, {BACKEND: BACKEND_BEFORE, LAYER: LAYER_BEFORE},
                   {BACKEND: BACKEND_AFTER, LAYER: LAYER_AFTER}, python_headers=True)
    facts = {c.symbol: c.detail for c in patch_only(pr) if c.kind == "attribute"}
    # the class line is in the hunk's context; the instance attribute's class is out of sight (header: the
    # method), and no added line of the PR names it
    assert facts == {"Backend.accept_output_buffer": "removed" + ATTRIBUTE_GONE,
                     "*.use_output": "removed" + ATTRIBUTE_GONE}
    impacts = {(i.path, i.line): i.severity for i in matched(patch_only(pr), DOWNSTREAM)}
    assert impacts[("ds/backend.py", 6)] == "breaks"  # the subclass's property of the removed attribute
    assert impacts[("ds/attention.py", 2)] == "breaks"  # `.use_output` on an object of unknown type


def test_an_attribute_set_again_or_named_elsewhere_is_no_fact(tmp_path):
    # the layer now sets the attribute in another method; the backend's attribute moved into a method
    layer_after = LAYER_BEFORE.replace("            self.use_output = backend.accept_output_buffer\n", "").replace(
        "            if self.use_output:\n", "            self.use_output = True\n            if self.use_output:\n")
    backend_after = BACKEND_AFTER.replace('            return "base"\n',
                                          '            return "base"\n\n        def accept_output_buffer(self):\n'
                                          '            return False\n')
    pr = change_of(tmp_path, {BACKEND: BACKEND_BEFORE, LAYER: LAYER_BEFORE},
                   {BACKEND: backend_after, LAYER: layer_after}, python_headers=True)
    assert not [c for c in patch_only(pr) if c.kind == "attribute"]


def test_an_instance_attribute_out_of_sight_still_named_is_no_fact(tmp_path):
    # the PR's other file still reads `.use_output`: some class may keep it, and this one is out of sight
    other = "vllm/attention/other.py"
    pr = change_of(tmp_path, {LAYER: LAYER_BEFORE, other: "def f(x):\n    return x\n"},
                   {LAYER: LAYER_AFTER, other: "def f(x):\n    return x.use_output\n"}, python_headers=True)
    assert not [c for c in patch_only(pr) if c.kind == "attribute"]


def test_a_method_removed_whole_does_not_remove_what_it_set(tmp_path):
    before = LAYER_BEFORE + '''
        def load(self):
            self.model = object()
            return self.model
'''
    after = LAYER_BEFORE
    pr = change_of(tmp_path, {LAYER: before}, {LAYER: after}, python_headers=True)
    assert not [c for c in patch_only(pr) if c.kind == "attribute"]


def test_an_attribute_a_context_line_still_reads_is_not_gone(tmp_path):
    # an unchanged line in sight of the PR's other file reads `.use_output` on a config: by name, not gone
    other = "vllm/config/attention.py"
    before = "def f(cfg):\n    a = 1\n    return cfg.use_output\n"
    pr = change_of(tmp_path, {LAYER: LAYER_BEFORE, BACKEND: BACKEND_BEFORE, other: before},
                   {LAYER: LAYER_AFTER, BACKEND: BACKEND_AFTER, other: before.replace("a = 1", "a = 2")},
                   python_headers=True)
    facts = {c.symbol: c.detail for c in patch_only(pr) if c.kind == "attribute"}
    assert facts == {"Backend.accept_output_buffer": "removed" + ATTRIBUTE_GONE}
