"""A new base-class hook that upstream now calls on every platform and that sets what plugin platforms chose in
another of their overrides (vLLM #35122: ``Platform.update_block_size_for_backend`` sets
``cache_config.block_size`` after ``check_and_update_config``): a downstream platform that does not define the hook
and whose own ``check_and_update_config`` sets or reads ``cache_config.block_size`` breaks; one that defines it, or
never touches the attribute in an override, is not flagged. Real git repositories made here, the facts read with the
upstream's whole tree, the downstream indexed from its files."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from prdigest.collect.facts import Surface, patch_facts
from prdigest.collect.facts.newhooks import sets
from prdigest.collect.facts.patchnewhooks import new_hook_facts
from prdigest.kernel.models import Impact
from tests.git_support import commit_week
from tests.impact_support import line_in, match_downstream, upstream_facts, upstream_impacts

INTERFACE = '''
    class Platform:
        @classmethod
        def check_and_update_config(cls, vllm_config) -> None:
            pass
'''
HOOK = INTERFACE + '''
        @classmethod
        def update_block_size_for_backend(cls, vllm_config) -> None:
            """Ensure block_size is compatible with the attention backend."""
            cache_config = vllm_config.cache_config
            if cache_config.user_specified_block_size:
                return
            cache_config.block_size = vllm_config.backend.preferred_block_size()
'''
PLATFORMS = '''
    from typing import TYPE_CHECKING

    if TYPE_CHECKING:
        from up.platforms.interface import Platform

        current_platform: Platform


    def __getattr__(name):
        from up.platforms.interface import Platform

        return Platform()
'''
EXECUTOR = '''
    from up.platforms import current_platform


    class Executor:
        def init_workers(self, vllm_config):
            self.load(vllm_config)
'''
CALLED = EXECUTOR + '''            current_platform.update_block_size_for_backend(vllm_config)
'''
#: upstream's own platform chose the block size in its check_and_update_config; the hook does it now
CUDA = '''
    from up.platforms.interface import Platform


    class CudaPlatform(Platform):
        @classmethod
        def check_and_update_config(cls, vllm_config) -> None:
            cache_config = vllm_config.cache_config
            if cache_config.block_size is None:
                cache_config.block_size = 16
            vllm_config.compiled = True
'''
CUDA_AFTER = CUDA.replace("""            if cache_config.block_size is None:
                cache_config.block_size = 16
""", "")
BEFORE = {"up/__init__.py": "", "up/platforms/__init__.py": PLATFORMS, "up/platforms/interface.py": INTERFACE,
          "up/platforms/cuda.py": CUDA, "up/executor.py": EXECUTOR}
AFTER = {"up/platforms/interface.py": HOOK, "up/platforms/cuda.py": CUDA_AFTER, "up/executor.py": CALLED}
HEAD = """
    from up.platforms.interface import Platform

"""
#: one platform a file, as plugins keep them
MINE = {
    "ds/hpu.py": HEAD + """
    class HpuPlatform(Platform):
        @classmethod
        def check_and_update_config(cls, vllm_config):
            cache_config = vllm_config.cache_config
            cache_config.block_size = 128
""",
    "ds/npu.py": HEAD + """
    class NpuPlatform(Platform):
        @classmethod
        def check_and_update_config(cls, vllm_config):
            parallel_config = vllm_config.parallel_config
            parallel_config.interleave = vllm_config.cache_config.block_size
""",
    "ds/adapted.py": HEAD + """
    class Adapted(Platform):
        @classmethod
        def check_and_update_config(cls, vllm_config):
            vllm_config.cache_config.block_size = 128

        @classmethod
        def update_block_size_for_backend(cls, vllm_config):
            pass
""",
    "ds/cpu.py": HEAD + """
    class CpuPlatform(Platform):
        @classmethod
        def check_and_update_config(cls, vllm_config):
            vllm_config.cache_config.cpu_kvcache_space = 4

        def block_size(self, vllm_config):
            return vllm_config.cache_config.block_size
""",
}


def _hooks(found: list[Impact]) -> list[tuple[str, int, str]]:
    return sorted((i.path, i.line, i.severity) for i in found if "update_block_size_for_backend" in i.fact)


def test_the_new_hook_says_what_it_sets_and_who_calls_it(tmp_path: Path) -> None:
    [fact] = [f for f in upstream_facts(tmp_path, BEFORE, AFTER) if f.kind == "added"
              and f.symbol == "Platform.update_block_size_for_backend"]
    assert fact.sets == ("cache_config.block_size",)
    assert fact.needed_by == ("up.executor.Executor.init_workers",)
    assert fact.moved_from == ("up.platforms.cuda.CudaPlatform.check_and_update_config",)


def test_a_platform_whose_override_sets_or_reads_what_the_new_hook_sets_breaks(tmp_path: Path) -> None:
    found = upstream_impacts(tmp_path, BEFORE, AFTER, MINE)
    assert _hooks(found) == [
        ("ds/adapted.py", line_in(MINE["ds/adapted.py"], "def update_block_size_for_backend"), "check"),
        ("ds/hpu.py", line_in(MINE["ds/hpu.py"], "class HpuPlatform"), "breaks"),
        ("ds/npu.py", line_in(MINE["ds/npu.py"], "class NpuPlatform"), "breaks")]
    [npu] = [i for i in found if i.path == "ds/npu.py"]
    assert "it sets cache_config.block_size, which your NpuPlatform.check_and_update_config sets or reads" in npu.fact


@pytest.mark.parametrize("after", [
    {"up/platforms/interface.py": HOOK, "up/platforms/cuda.py": CUDA_AFTER},  # upstream never calls it
    {"up/platforms/interface.py": HOOK, "up/executor.py": CALLED},  # no upstream platform set it before
], ids=["never-called", "nothing-moved"])
def test_a_new_hook_breaks_nothing_without_a_call_and_a_move(tmp_path: Path, after: dict[str, str | None]) -> None:
    found = upstream_impacts(tmp_path, BEFORE, after, MINE)
    assert [severity for _, _, severity in _hooks(found)] == ["check"]


@pytest.mark.parametrize(("body", "expected"), [
    ("cache_config.block_size = 16", ("cache_config.block_size",)),
    ("vllm_config.cache_config.block_size = 16", ("cache_config.block_size",)),
    ("self.block_size = 16", ()),
    ("config.block_size = 16", ()),
    ("cache_config.block_size += 16\nmodel_config.max_len: int = 2", ("cache_config.block_size",
                                                                      "model_config.max_len")),
    ("def inner():\n    cache_config.block_size = 16", ()),
])
def test_what_a_method_sets(body: str, expected: tuple[str, ...]) -> None:
    indented = "\n".join("    " + row for row in body.splitlines())
    method = ast.parse(f"def hook(cls, vllm_config):\n{indented}\n").body[0]
    assert isinstance(method, ast.FunctionDef)
    assert sets(method) == expected


def test_the_new_hook_breaks_the_same_platforms_from_the_patches_alone(tmp_path: Path) -> None:
    [pr] = commit_week(tmp_path / "upstream", BEFORE, {1: ("Pick the block size for the backend", AFTER)})
    facts = patch_facts(pr, Surface(packages=("up",)))
    [hook] = [f for f in facts if f.kind == "added" and f.symbol.endswith("update_block_size_for_backend")]
    assert (hook.symbol, hook.sets, hook.needed_by, hook.moved_from) == (
        "Platform.update_block_size_for_backend", ("cache_config.block_size",), ("up.executor.Executor.init_workers",),
        ("up.platforms.cuda.CudaPlatform.check_and_update_config",))
    found = match_downstream(tmp_path, facts, MINE)
    assert [(path, severity) for path, _, severity in _hooks(found)] == [
        ("ds/adapted.py", "check"), ("ds/hpu.py", "breaks"), ("ds/npu.py", "breaks")]


def test_from_the_patches_a_new_method_nothing_moved_into_says_nothing_more(tmp_path: Path) -> None:
    after = {"up/platforms/interface.py": HOOK, "up/executor.py": CALLED}
    [pr] = commit_week(tmp_path / "upstream", BEFORE, {1: ("Add a hook", after)})
    [hook] = [f for f in patch_facts(pr, Surface(packages=("up",))) if f.kind == "added"]
    assert (hook.sets, hook.needed_by, hook.moved_from) == ((), (), ())


#: the hunks as GitHub shows them (git's Python driver): the hook's class is out of sight, its header a method
HIDDEN = [
    ("up/platforms/interface.py", """@@ -40,2 +40,8 @@ def check_and_update_config(cls, vllm_config) -> None:
         \\"\\"\\"The platform's checks.\\"\\"\\"
         pass
+    @classmethod
+    def update_block_size_for_backend(cls, vllm_config) -> None:
+        cache_config = vllm_config.cache_config
+        if cache_config.user_specified_block_size:
+            return
+        cache_config.block_size = vllm_config.backend.preferred_block_size()
"""),
    ("up/platforms/cuda.py", """@@ -70,6 +70,4 @@ def check_and_update_config(cls, vllm_config) -> None:
         cache_config = vllm_config.cache_config
-        if cache_config.block_size is None:
-            cache_config.block_size = 16
         vllm_config.compiled = True
"""),
    ("up/executor.py", """@@ -9,3 +9,4 @@ def init_workers(self, vllm_config):
         self.load(vllm_config)
+        current_platform.update_block_size_for_backend(vllm_config)
"""),
]


def test_a_new_hook_whose_class_is_out_of_sight_breaks_the_subclasses_of_its_module(tmp_path: Path) -> None:
    [hook] = new_hook_facts(HIDDEN, [])
    assert (hook.symbol, hook.sets, hook.needed_by, hook.moved_from) == (
        "*.update_block_size_for_backend", ("cache_config.block_size",), ("up.executor.*.init_workers",),
        ("up.platforms.cuda.*.check_and_update_config",))
    found = match_downstream(tmp_path, [hook], MINE)
    assert [(path, severity) for path, _, severity in _hooks(found)] == [
        ("ds/adapted.py", "check"), ("ds/hpu.py", "breaks"), ("ds/npu.py", "breaks")]
