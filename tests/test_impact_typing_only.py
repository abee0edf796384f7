"""A name removed upstream that the downstream imports only for its type checker (``if TYPE_CHECKING:``) fails no
run: a ``check``, not a break (issue 36: tpu-inference imported ``vllm.config.cache.BlockSize`` that way and vLLM
0.18.1 removed it). An import at run time of a removed name still breaks. Real git repositories: the upstream read
with its tree, the downstream indexed from its checkout (and again from the summary cache)."""

from __future__ import annotations

from tests.impact_support import upstream_impacts

CACHE = ("class BlockSize(int):\n    pass\n\n\nclass CacheDType(str):\n    pass\n\n\n"
         "class CacheConfig:\n    block_size: int = 16\n")
NEW_CACHE = "class CacheConfig:\n    block_size: int = 16\n"
DOWNSTREAM = {"ds/platform.py": "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                                "    from up.cache import BlockSize\n\n\n"
                                "def size(config) -> 'BlockSize':\n    return config.block_size\n",
              "ds/worker.py": "import typing\n\nfrom up.cache import CacheDType\n\nif typing.TYPE_CHECKING:\n"
                              "    from up.cache import BlockSize\n\n\ndef dtype() -> CacheDType:\n    return 'auto'\n"}


def test_an_import_for_the_type_checker_only_is_a_check(tmp_path):
    before = {"up/__init__.py": "", "up/cache.py": CACHE}
    impacts = upstream_impacts(tmp_path, before, {"up/cache.py": NEW_CACHE}, DOWNSTREAM)
    assert sorted((i.path, i.line, i.symbol, i.severity) for i in impacts if i.how == "imports") == [
        ("ds/platform.py", 4, "up.cache.BlockSize", "check"),
        ("ds/worker.py", 3, "up.cache.CacheDType", "breaks"),
        ("ds/worker.py", 6, "up.cache.BlockSize", "check")]
    assert all("TYPE_CHECKING" in i.fact for i in impacts if i.symbol.endswith("BlockSize"))
