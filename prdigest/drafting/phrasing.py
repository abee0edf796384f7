"""Phrasing: what every part of an offline draft shares to speak both languages within its bounds.

The output bounds, the subsystem labels in zh-CN and English, lists of code names and the spacing
between Chinese and Latin text.
"""

from __future__ import annotations

import re

# ── Output bounds: whatever the PR holds, the draft stays this short. ────────────────────────────────
MAX_HEADLINE, MAX_RATIONALE, MAX_POINT, MAX_FOLLOWUP, MAX_AUDIENCE = 80, 320, 260, 220, 80

AREA_LABEL = {  # subsystem → (zh, en): headline prefix and reasons
    "kernels": ("内核", "Kernels"), "moe": ("MoE", "MoE"), "attention": ("注意力", "Attention"),
    "spec-decode": ("投机解码", "Speculative decoding"), "distributed": ("分布式", "Distributed"),
    "kv-cache": ("KV 缓存", "KV cache"), "scheduler-core": ("调度器", "Scheduler"), "rocm": ("ROCm", "ROCm"),
    "tpu": ("TPU", "TPU"), "cpu-xpu": ("CPU/XPU", "CPU/XPU"), "models": ("模型", "Models"),
    "multimodal": ("多模态", "Multimodal"), "frontend-api": ("前端 API", "Frontend API"),
    "tool-calling": ("工具调用", "Tool calling"), "structured-output": ("结构化输出", "Structured output"),
    "quantization": ("量化", "Quantization"), "ci-build": ("CI/构建", "CI and build"),
    "deps": ("依赖", "Dependencies"), "docs": ("文档", "Docs"), "security": ("安全", "Security"),
    "perf-benchmarks": ("性能基准", "Benchmarks"), "lora": ("LoRA", "LoRA"), "sampling": ("采样", "Sampling"),
    "other": ("其他", "Other"),
}

_CJK = "\u4e00-\u9fff"
_CJK_ASCII = re.compile(rf"(?<=[{_CJK}])(?=[A-Za-z0-9`(\[\-_~$@#*+])|(?<=[A-Za-z0-9`)\]\-_%+])(?=[{_CJK}])")
_CJK_GAP = re.compile(rf"(?<=[{_CJK}]) +(?=[{_CJK}])")


def code_names(items: tuple[str, ...] | list[str], limit: int, zh: bool) -> str:
    """Backticked code names, verbatim: a shortened name would cite something the PR never wrote."""
    fit = [i for i in items if "`" not in i and len(i) <= 120]
    return ("、" if zh else ", ").join(f"`{i}`" for i in fit[:limit])


def area_names(areas: tuple[str, ...], zh: bool) -> str:
    """The labels of the first two ``areas`` in the language asked for."""
    return ("、" if zh else ", ").join(AREA_LABEL[a][0 if zh else 1] for a in areas[:2])


def zh_spacing(text: str) -> str:
    """A space between Chinese and Latin text, none between two Chinese words."""
    return _CJK_GAP.sub("", re.sub(r" {2,}", " ", _CJK_ASCII.sub(" ", text))).strip()
