"""Signatures a patch shows only in part, one parameter a line (prdigest.collect.facts.patchsigs): the head (the
``def`` line and the parameters below it, the closing line past the hunk) and a hunk that opens at ``self,``
right under git's ``def __init__(`` header and ends inside the signature (vLLM 0.20's
``KVCacheCoordinator.__init__(…, max_num_batched_tokens: int, …)`` and
``IterationStats.update_from_finished_request(…, request_id: str, …)``)."""

from __future__ import annotations

from pathlib import Path

from tests.patch_support import change_of, matched, patch_only

#: A long signature, one parameter a line, then a body far enough below that no hunk shows its closing line.
_PARAMS = ["kv_cache_config: KVCacheConfig", "max_model_len: int", "use_eagle: bool", "enable_caching: bool",
           "enable_kv_cache_events: bool", "dcp_world_size: int", "pcp_world_size: int", "hash_block_size: int"]


def _coordinator(params: list[str]) -> str:
    lines = "".join(f"        {p},\n" for p in params)
    return ("class KVCacheCoordinator:\n    def __init__(\n        self,\n" + lines + "    ) -> None:\n"
            "        self.max_model_len = max_model_len\n")


def _stats(params: list[str]) -> str:
    lines = "".join(f"        {p},\n" for p in params)
    return ("class IterationStats:\n    def __init__(self) -> None:\n        self.n = 0\n\n"
            "    def update_from_finished_request(\n        self,\n" + lines + "    ) -> None:\n"
            "        self.n += 1\n")


#: A downstream subclass overriding the constructor without the new parameter, and one overriding the method.
COORDINATOR_DS = '''from vllm.coordinator import KVCacheCoordinator


class NPUCoordinator(KVCacheCoordinator):
    def __init__(self, kv_cache_config, max_model_len, use_eagle, enable_caching, enable_kv_cache_events,
                 dcp_world_size, pcp_world_size, hash_block_size):
        super().__init__(kv_cache_config, max_model_len, use_eagle, enable_caching, enable_kv_cache_events,
                         dcp_world_size, pcp_world_size, hash_block_size)
'''
STATS_DS = '''from vllm.stats import IterationStats


class NPUStats(IterationStats):
    def update_from_finished_request(self, finish_reason, num_prompt_tokens, max_tokens_param, req_stats,
                                     lora_name, engine_core_timestamp, num_cached_tokens, num_external_tokens):
        return None
'''
STATS_PARAMS = ['finish_reason: "FinishReason"', "num_prompt_tokens: int", "max_tokens_param: int | None",
                "req_stats: RequestStateStats", "lora_name: str | None", "engine_core_timestamp: float",
                "num_cached_tokens: int", "num_external_tokens: int"]


def test_a_hunk_opening_at_self_under_a_def_header_reads_a_required_parameter_added(tmp_path: Path):
    before = _coordinator(_PARAMS)
    after = _coordinator(_PARAMS[:2] + ["max_num_batched_tokens: int"] + _PARAMS[2:])
    pr = change_of(tmp_path, {"vllm/__init__.py": "", "vllm/coordinator.py": before},
                   {"vllm/coordinator.py": after}, python_headers=True)
    facts = patch_only(pr)
    assert [(f.symbol, f.detail) for f in facts if f.kind == "signature"] == [
        ("*.__init__", "+max_num_batched_tokens")]
    found = matched(facts, {"ds/coordinator.py": COORDINATOR_DS})
    assert [(i.symbol, i.how, i.severity) for i in found if i.fact.startswith("signature:")] == [
        ("vllm.coordinator.KVCacheCoordinator.__init__", "overrides", "breaks")]


def test_the_head_of_a_signature_whose_closing_line_is_past_the_hunk_reads_a_required_parameter(tmp_path: Path):
    before = _stats(STATS_PARAMS)
    after = _stats(STATS_PARAMS[:1] + ["request_id: str"] + STATS_PARAMS[1:])
    pr = change_of(tmp_path, {"vllm/__init__.py": "", "vllm/stats.py": before}, {"vllm/stats.py": after},
                   python_headers=True)
    facts = patch_only(pr)
    assert [(f.symbol, f.detail) for f in facts if f.kind == "signature"] == [
        ("*.update_from_finished_request", "+request_id")]
    found = matched(facts, {"ds/stats.py": STATS_DS})
    assert [(i.how, i.severity) for i in found if i.fact.startswith("signature:")] == [("overrides", "breaks")]


def test_arguments_of_a_call_opening_at_self_are_no_signature(tmp_path: Path):
    # ``Base.__init__(self, …)`` under a ``def __init__(`` header: arguments, no annotation, so no parameters
    call = ("class Child(Base):\n    def __init__(self, cfg, size, eps):\n        Base.__init__(\n"
            + "".join(f"            {a},\n" for a in ["self", "cfg", "size", "eps", "a", "b", "c", "d"])
            + "        )\n")
    pr = change_of(tmp_path, {"vllm/__init__.py": "", "vllm/child.py": call},
                   {"vllm/child.py": call.replace("            eps,\n", "            eps,\n            dtype,\n")},
                   python_headers=True)
    assert [f for f in patch_only(pr) if f.kind == "signature"] == []


def test_a_parameter_renamed_in_place_in_a_head_does_not_break_a_call_passing_it_by_position(tmp_path: Path):
    # vLLM 0.20's EagleCudaGraphManager.capture(self, generate_fn → forward_fn, …): vllm-ascend's
    # super().capture(forward_fn, model_state, …) binds by position as before
    before = _stats(STATS_PARAMS)
    after = _stats(["finish_reason_code: \"FinishReason\""] + STATS_PARAMS[1:])
    pr = change_of(tmp_path, {"vllm/__init__.py": "", "vllm/stats.py": before}, {"vllm/stats.py": after},
                   python_headers=True)
    facts = patch_only(pr)
    assert [(f.symbol, f.detail) for f in facts if f.kind == "signature"] == [
        ("*.update_from_finished_request", "finish_reason→finish_reason_code")]
    positional = STATS_DS.replace("        return None\n", "        return super().update_from_finished_request(\n"
                                  "            finish_reason, num_prompt_tokens, max_tokens_param, req_stats,\n"
                                  "            lora_name, engine_core_timestamp, num_cached_tokens,\n"
                                  "            num_external_tokens)\n")
    found = matched(facts, {"ds/stats.py": positional})
    assert [i.severity for i in found if i.fact.startswith("signature:")] in ([], ["check"])
    assert not [i for i in found if i.severity == "breaks"]
