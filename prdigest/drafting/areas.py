"""Areas: the subsystems a PR's files and title words point to, when the classifier gave none."""

from __future__ import annotations

import re

from prdigest.drafting.files import BENCH, BUILD, CI, DOC, SOURCE, TEST, FileFact
from prdigest.models import SUBSYSTEMS

#: Subsystems whose changes shape how the engine runs; a change there is worth more attention.
CORE_AREAS = ("attention", "moe", "kernels", "spec-decode", "distributed", "kv-cache", "scheduler-core")
#: Feature and platform areas: narrower audience than the core, more than docs or CI.
FEATURE_AREAS = ("security", "structured-output", "lora", "quantization", "cpu-xpu", "rocm", "tpu",
                 "tool-calling", "sampling")
#: Headline and audience order: the most specific, most engine-central area first.
AREA_PRIORITY = (
    "security", "spec-decode", "moe", "attention", "kv-cache", "scheduler-core", "structured-output",
    "tool-calling", "lora", "quantization", "sampling", "distributed", "kernels", "multimodal", "rocm",
    "tpu", "cpu-xpu", "frontend-api", "models", "perf-benchmarks", "deps", "ci-build", "docs", "other",
)

#: Path tokens that place a file in a subsystem when the classifier gave none. A token must start at a
#: path boundary, so "tpu" does not match "output" and "hip" does not match "ship".
_PATH_AREAS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (area, re.compile(r"(?<![a-z0-9])(?:" + alternatives + ")")) for area, alternatives in (
        ("kernels", r"csrc/|kernels/|triton"),
        ("moe", r"moe|experts?"),
        ("attention", r"attention|attn|mla|flashinfer|flashmla"),
        ("spec-decode", r"spec_decode|eagle|mtp|medusa|speculat|dspark"),
        ("distributed", r"distributed/|parallel|all2all|dcp"),
        ("kv-cache", r"kv_cache|kv_transfer|kv_connector|block_manager|prefix_cach"),
        ("scheduler-core", r"core/sched|scheduler"),
        ("rocm", r"rocm|aiter|amd/|hip"),
        ("tpu", r"tpu|pallas"),
        ("cpu-xpu", r"cpu|xpu"),
        ("structured-output", r"structured_output|guided"),
        ("tool-calling", r"tool_parsers?"),
        ("quantization", r"quantization"),
        ("lora", r"lora"),
        ("sampling", r"sampler|sample/|sampling"),
        ("multimodal", r"multimodal|vision|vl_|vl\.|mm_"),
        ("frontend-api", r"entrypoints/"),
        ("models", r"model_executor/models/|models/"),
    ))
#: Title words and tags ("[Spec Decode]", "Expert Parallelism") as a further fallback; a needle must start
#: a word.
_TAG_AREAS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(r"(?<![a-z0-9])" + needle), area) for needle, area in (
        ("spec", "spec-decode"), ("eagle", "spec-decode"), ("mtp", "spec-decode"), ("moe", "moe"),
        ("kernel", "kernels"), ("attention", "attention"), ("mla", "attention"), ("rocm", "rocm"),
        ("amd", "rocm"), ("tpu", "tpu"), ("cpu", "cpu-xpu"), ("xpu", "cpu-xpu"), ("intel", "cpu-xpu"),
        ("doc", "docs"), (r"ci\b", "ci-build"), ("build", "ci-build"), ("frontend", "frontend-api"),
        (r"models?\b", "models"), ("vlm", "multimodal"), ("multimodal", "multimodal"), ("lora", "lora"),
        ("quant", "quantization"), ("structured", "structured-output"), ("tool", "tool-calling"),
        ("security", "security"), ("sched", "scheduler-core"), ("p/d", "kv-cache"), ("kv", "kv-cache"),
        ("perf", "perf-benchmarks"), ("bench", "perf-benchmarks"), (r"deps\b", "deps"),
        ("dependenc", "deps"), ("distributed", "distributed"), ("parallel", "distributed"),
        ("dcp", "distributed"), ("all2all", "distributed"), ("speculative", "spec-decode"),
        ("expert", "moe"), ("connector", "kv-cache"), ("prefix cach", "kv-cache"),
    ))


def areas_from(files: tuple[FileFact, ...], words: tuple[str, ...]) -> list[str]:
    """Areas the most changed files and the given title words and tags point to, repeats included."""
    found: list[str] = []
    for fact in files[:50]:  # the most changed files decide; a 3,000-file PR is no slower
        low = fact.path.lower()
        if fact.kind == DOC:
            found.append("docs")
        elif fact.kind in (CI, BUILD):
            found.append("deps" if "requirements" in low or low.endswith((".lock", "pyproject.toml"))
                         else "ci-build")
        elif fact.kind == BENCH:
            found.append("perf-benchmarks")
        if fact.is_kernel:
            found.append("kernels")
        if fact.kind in (SOURCE, TEST):
            found.extend(area for area, pattern in _PATH_AREAS if pattern.search(low))
    for word in words:
        found.extend(area for pattern, area in _TAG_AREAS if pattern.search(word))
    return found


def by_priority(areas: list[str]) -> tuple[str, ...]:
    """The known subsystems among ``areas``, once each, in :data:`AREA_PRIORITY` order."""
    known = {a for a in areas if a in SUBSYSTEMS}
    return tuple(a for a in AREA_PRIORITY if a in known)
