"""Work a PR moves into a method, read from its patches together (a real git repository's diff with git's Python
hunk headers): a model config's check loses its block-size alignment, which a new platform helper gains, called
from ``Platform.update_block_size``. A downstream platform that overrides it without calling the base's no longer
aligns anything: it breaks; one that calls the base's, or that patches the old home with its own copy, is a check."""

from __future__ import annotations

from pathlib import Path

from tests.patch_support import change_of, matched, patch_only

CONFIG = "vllm/model_executor/models/config.py"
INTERFACE = "vllm/platforms/interface.py"

#: The work that moves: eight statements a reader would call the alignment.
WORK = '''        cache_config = vllm_config.cache_config
        model_config = vllm_config.model_config
        attn_page_size_1_token = model_config.get_head_size() * model_config.num_kv_heads
        mamba_page_size = model_config.get_mamba_state_size(vllm_config.parallel_config)
        if mamba_page_size == 0:
            return
        attn_block_size = -(-mamba_page_size // attn_page_size_1_token)
        if cache_config.block_size < attn_block_size:
            cache_config.block_size = attn_block_size
        cache_config.mamba_page_size_padded = cache_config.block_size * attn_page_size_1_token
'''

CONFIG_BEFORE = '''
class HybridConfig:
    """Checks of hybrid attention/mamba models."""

    @classmethod
    def verify_and_update_config(cls, vllm_config) -> None:
        """Align the attention block size with the mamba state."""
        vllm_config.cache_config.calculate_kv_scales = False
''' + WORK + '''

class OtherConfig:
    @classmethod
    def verify_and_update_config(cls, vllm_config) -> None:
        return None
'''
CONFIG_AFTER = CONFIG_BEFORE.replace(WORK, "")

INTERFACE_BEFORE = '''
import logging

logger = logging.getLogger(__name__)


class Platform:
    """A platform."""

    device_name: str = "base"

    @classmethod
    def check_and_update_config(cls, vllm_config) -> None:
        return None

    @classmethod
    def update_block_size(cls, vllm_config) -> None:
        """Ensure block_size fits the attention backend."""
        cache_config = vllm_config.cache_config
        if cache_config.user_specified_block_size:
            return
        cache_config.block_size = 16

    @classmethod
    def name(cls) -> str:
        return "base"
'''
HELPER = '''
    @classmethod
    def _align_hybrid_block_size(cls, vllm_config) -> None:
        """For hybrid models, pad the mamba page to the attention page."""
''' + WORK
INTERFACE_AFTER = INTERFACE_BEFORE.replace('''        cache_config.block_size = 16
''', '''        cache_config.block_size = 16
        if vllm_config.model_config.is_hybrid:
            cls._align_hybrid_block_size(vllm_config)
''' + HELPER)

PLATFORMS = '''from vllm.platforms.interface import Platform


class SkipPlatform(Platform):
    @classmethod
    def update_block_size(cls, vllm_config):
        pass


class BasePlatform(Platform):
    @classmethod
    def update_block_size(cls, vllm_config):
        super().update_block_size(vllm_config)
'''


def _pr(tmp_path: Path, config_after: str | None = CONFIG_AFTER, interface_after: str = INTERFACE_AFTER):
    return change_of(tmp_path, {CONFIG: CONFIG_BEFORE, INTERFACE: INTERFACE_BEFORE},
                     {CONFIG: config_after, INTERFACE: interface_after}, python_headers=True)


def test_work_moved_into_a_method_breaks_an_override_that_skips_the_base(tmp_path: Path) -> None:
    facts = patch_only(_pr(tmp_path))
    moved = [(c.kind, c.symbol, c.moved_from) for c in facts if c.moved_from]
    # git's header names check_and_update_config: the method's class is out of sight (the config's is in sight)
    assert moved == [("body", "*.update_block_size",
                      ("vllm.model_executor.models.config.HybridConfig.verify_and_update_config",))]
    impacts = {(i.path, i.line): i.severity
               for i in matched(facts, {"ds/__init__.py": "", "ds/platform.py": PLATFORMS})}
    # SkipPlatform's override (line 6) never runs the alignment now; BasePlatform's (line 12) calls the base's
    assert impacts == {("ds/platform.py", 6): "breaks", ("ds/platform.py", 12): "check"}


def test_a_downstream_that_patches_the_old_home_keeps_its_own_copy_a_check(tmp_path: Path) -> None:
    downstream = {"ds/__init__.py": "", "ds/platform.py": PLATFORMS, "ds/patch_config.py": '''
import vllm.model_executor.models.config


@classmethod
def verify_and_update_config(cls, vllm_config):
    vllm_config.cache_config.block_size = 128


vllm.model_executor.models.config.HybridConfig.verify_and_update_config = verify_and_update_config
'''}
    impacts = [(i.path, i.line, i.severity) for i in matched(patch_only(_pr(tmp_path)), downstream)
               if i.path == "ds/platform.py"]
    assert impacts == [("ds/platform.py", 6, "check"), ("ds/platform.py", 12, "check")]


def test_a_rewrite_in_place_a_move_inside_one_module_or_a_deleted_old_home_moves_nothing(tmp_path: Path) -> None:
    # the method's own lines moved into its new helper: nothing ran elsewhere before
    inside = INTERFACE_BEFORE.replace('''    @classmethod
    def name(cls)''', HELPER.lstrip("\n").replace("_align_hybrid_block_size", "_old_align") + '''
    @classmethod
    def name(cls)''')
    cases = [
        # the config keeps its work; the platform gains a copy of it under a new helper: nothing was removed
        (CONFIG_BEFORE.replace("calculate_kv_scales = False", "calculate_kv_scales = True"), INTERFACE_AFTER,
         INTERFACE_BEFORE),
        # the helper moved inside the platform's module, the config untouched
        (CONFIG_BEFORE.replace("calculate_kv_scales = False", "calculate_kv_scales = True"),
         INTERFACE_AFTER, inside),
        # the config module deleted: its classes went elsewhere, no function lost work it keeps doing
        (None, INTERFACE_AFTER, INTERFACE_BEFORE),
    ]
    for n, (config_after, interface_after, interface_before) in enumerate(cases):
        pr = change_of(tmp_path / str(n), {CONFIG: CONFIG_BEFORE, INTERFACE: interface_before},
                       {CONFIG: config_after, INTERFACE: interface_after}, python_headers=True)
        facts = patch_only(pr)
        assert not [c for c in facts if c.moved_from], n
        assert not [i for i in matched(facts, {"ds/__init__.py": "", "ds/platform.py": PLATFORMS})
                    if i.severity == "breaks"], n
