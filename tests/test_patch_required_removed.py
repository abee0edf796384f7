"""A required parameter a multi-line signature's tail drops breaks every call of it from patches alone, as it does
from full files (issue 36: vLLM 0.17.1 → 0.18.1 dropped ``block_size`` from ``get_attn_backend``; vllm-ascend's
and vllm-gaudi's positional calls were only told to check). Each row is an upstream change in a real git
repository served as GitHub serves its files, with Python hunk headers; the controls beside it stay checks."""

from __future__ import annotations

from tests.patch_support import change_of, matched, patch_only

SELECTOR = "vllm/attention/selector.py"
HEAD = '"""Backend selection."""\n\nimport functools\n\n\n'
SIG = ("def get_backend(\n    head_size: int,\n    dtype: str,\n    kv_cache_dtype: str | None,\n"
       "    block_size: int | None,\n    use_mla: bool = False,\n    has_sink: bool = False,\n"
       "    use_sparse: bool = False,\n) -> str:\n    return f\"{head_size}{dtype}\"\n")
CALLS = {"ds/__init__.py": "",
         "ds/runner.py": "from vllm.attention.selector import get_backend\n\n\n"
                         "def positional(size):\n    return get_backend(64, 'bf16', None, size, use_mla=True)\n\n\n"
                         "def by_keyword(size):\n    return get_backend(64, 'bf16', None, block_size=size)\n\n\n"
                         "def short():\n    return get_backend(64, 'bf16', None)\n"}


def _severities(before: str, after: str, tmp_path) -> list[tuple[str, int, str]]:
    pr = change_of(tmp_path, {SELECTOR: HEAD + before}, {SELECTOR: HEAD + after}, python_headers=True)
    return sorted((i.path, i.line, i.severity) for i in matched(patch_only(pr), CALLS) if i.how == "calls")


def test_a_required_parameter_dropped_from_a_signature_tail_breaks_positional_calls(tmp_path):
    pr = change_of(tmp_path, {SELECTOR: HEAD + SIG},
                   {SELECTOR: HEAD + SIG.replace("    block_size: int | None,\n", "")}, python_headers=True)
    sigs = [c for c in patch_only(pr) if c.kind == "signature"]
    # the def line is out of the hunk's sight: no before/after, the detail says the parameter was required
    assert [(c.symbol, c.before, c.detail) for c in sigs] == [("get_backend", "", "-block_size (required)")]
    impacts = sorted((i.line, i.severity) for i in matched(sigs, CALLS) if i.how == "calls")
    # every call that worked passed it: the positional one now binds size to use_mla (and use_mla twice)
    assert impacts == [(5, "breaks"), (9, "breaks"), (13, "breaks")]


def test_a_defaulted_parameter_dropped_from_a_tail_stays_a_check_for_positional_calls(tmp_path):
    assert _severities(SIG, SIG.replace("    has_sink: bool = False,\n", ""), tmp_path) == [
        ("ds/runner.py", 5, "check"), ("ds/runner.py", 9, "check"), ("ds/runner.py", 13, "check")]


def test_a_required_parameter_renamed_in_its_place_is_not_marked_removed(tmp_path):
    pr = change_of(tmp_path, {SELECTOR: HEAD + SIG},
                   {SELECTOR: HEAD + SIG.replace("    block_size: int | None,\n", "    page_size: int | None,\n")},
                   python_headers=True)
    # a rename keeps the place (a positional call still binds): the tail says it as a removal and an addition
    assert [c.detail for c in patch_only(pr) if c.kind == "signature"] == ["-block_size, +page_size"]
