"""Class fields read back from patches alone (a real git repository's diff): a dataclass's, a pydantic model's
or a NamedTuple's fields removed, renamed, added without a default, defaulted; nothing for a plain class."""

from __future__ import annotations

from tests.patch_support import change_of, matched, patch_only

PATH = "vllm/forward_context.py"
BEFORE = '''
    from dataclasses import dataclass, field
    from typing import NamedTuple

    from pydantic import BaseModel


    @dataclass
    class DPMetadata:
        max_tokens_across_dp_cpu: int
        num_tokens_across_dp_cpu: int
        local_sizes: list = field(default_factory=list)


    class Selector(NamedTuple):
        head_size: int
        use_mla: bool = False


    class Features(BaseModel):
        mm_hashes: dict
        block_size: int = 16


    class Plain:
        name: str

        def __init__(self):
            self.name = "x"
'''
AFTER = BEFORE.replace("        max_tokens_across_dp_cpu: int\n", "") \
    .replace("        head_size: int\n", "        head_dim: int\n") \
    .replace("        block_size: int = 16\n", "        block_size: int = 32\n        kv_data: dict\n") \
    .replace("        name: str\n", "")


def _facts(tmp_path):
    pr = change_of(tmp_path, {PATH: BEFORE}, {PATH: AFTER})
    return {(c.kind, c.symbol): c for c in patch_only(pr) if c.kind in ("signature", "attribute")}


def test_fields_removed_renamed_added_and_defaulted_are_constructor_and_attribute_facts(tmp_path):
    facts = _facts(tmp_path)
    assert facts[("signature", "DPMetadata")].detail == "-max_tokens_across_dp_cpu"
    assert facts[("attribute", "DPMetadata.max_tokens_across_dp_cpu")].detail == "removed"
    assert facts[("signature", "Selector")].detail == "head_size→head_dim"
    assert facts[("attribute", "Selector.head_size")].detail == "removed"
    assert facts[("signature", "Features")].detail == "+kv_data, block_size=16→32"
    # only part of the field list is in sight: no whole constructor signature, no position
    assert all(not c.before and not c.after for (kind, _), c in facts.items() if kind == "signature")
    # a plain class's annotation is no field: nothing said of Plain
    assert not [k for k in facts if k[1].startswith("Plain")]


def test_field_facts_flag_the_calls_and_reads_they_break(tmp_path):
    downstream = {
        "ds/__init__.py": "",
        "ds/ctx.py": '''from vllm.forward_context import DPMetadata, Features, Selector


def make(n):
    meta = DPMetadata(max_tokens_across_dp_cpu=n, num_tokens_across_dp_cpu=n)
    sel = Selector(head_size=64)
    feats = Features(mm_hashes={})
    return meta, sel, feats, Selector.head_size
''',
    }
    got = {(i.symbol.rsplit(".", 1)[-1], i.severity) for i in matched(list(_facts(tmp_path).values()), downstream)}
    assert ("DPMetadata", "breaks") in got  # passes the removed field by keyword
    assert ("Features", "breaks") in got  # does not pass the new required field
    assert ("head_size", "breaks") in got  # reads the renamed field through the class


def test_a_class_added_or_removed_whole_gives_no_field_facts(tmp_path):
    before = '''
        from dataclasses import dataclass


        @dataclass
        class Old:
            a: int
    '''
    after = '''
        from dataclasses import dataclass


        @dataclass
        class New:
            b: int
    '''
    pr = change_of(tmp_path, {"vllm/x.py": before}, {"vllm/x.py": after})
    assert not [c for c in patch_only(pr) if c.kind == "attribute" or (c.kind == "signature" and "." not in c.symbol)]
