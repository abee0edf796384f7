"""Config keys read from a mapping users fill, and a repo's envs.py without a rules file: settings facts
(prdigest/collect/facts/configkeys.py, surface.DEFAULT_ENV), a key moved between files is no change."""

from __future__ import annotations

from prdigest.collect.facts import Surface, commit_facts
from prdigest.collect.git import CommitDiff, FileDiff
from prdigest.kernel.actions import actions

BEFORE = '''
class AscendConfig:
    def __init__(self, additional_config):
        self.enable_kv_nz = additional_config.get("enable_kv_nz", False)
        self.old_flag = additional_config.get("old_flag", True)
        self.depth = additional_config.get("depth", 2)
        self.moved = additional_config.get("moved_key", 1)
'''
AFTER = '''
class AscendConfig:
    def __init__(self, additional_config):
        self.enable_kv_nz = additional_config.get("enable_kv_nz", False)
        self.depth = additional_config.get("depth", 4)
        self.cache = {}.get("not_config")
'''
OTHER = '''
def read(additional_config):
    return additional_config.get("moved_key", 1)
'''
ENVS_BEFORE = 'import os\nenv_variables = {"ASCEND_OLD": lambda: os.getenv("ASCEND_OLD", "0")}\n'
ENVS_AFTER = 'import os\nenv_variables = {}\n'


def _facts() -> list:
    diff = CommitDiff(sha="a" * 40, parent="b" * 40, files=(
        FileDiff(status="M", path="vllm_ascend/ascend_config.py", before=BEFORE, after=AFTER),
        FileDiff(status="A", path="vllm_ascend/other.py", after=OTHER),
        FileDiff(status="M", path="vllm_ascend/envs.py", before=ENVS_BEFORE, after=ENVS_AFTER)))
    return commit_facts(diff, Surface())


def test_config_keys_removed_and_given_a_new_default_are_facts() -> None:
    facts = {(c.kind, c.symbol, c.detail, c.before, c.after) for c in _facts() if c.kind in ("config", "env")}
    assert facts == {("config", "old_flag", "removed", "True", ""), ("config", "depth", "default", "2", "4"),
                     ("env", "ASCEND_OLD", "removed", "'0'", "")}


def test_they_ask_the_reader_to_act() -> None:
    assert actions(_facts(), "en") == [
        "Stop setting the config key `old_flag`; it was removed.",
        "Set the config key `depth` to `2` if you relied on its default: it is now `4`.",
        "Stop setting the environment variable `ASCEND_OLD`; it was removed."]


def test_a_mapping_read_from_checkpoint_files_is_not_user_config() -> None:
    text = 'def load(quant_config, hf_config):\n    return quant_config.get("quant_method"), hf_config["x"]\n'
    diff = CommitDiff(sha="a" * 40, parent="b" * 40, files=(FileDiff(status="D", path="vllm_ascend/q.py", before=text),))
    assert not [c for c in commit_facts(diff, Surface()) if c.kind == "config"]
