"""A config class's field renamed or removed upstream, against a downstream that reads and sets it through an
object named after the class (``vllm_config.compilation_config.split_points``): the downstream also assigns the
name, so the index's by-name ``attribute`` uses leave it out, and only the receiver's name types it. Real git
repositories made here, facts read with the upstream's tree and from the patch alone; the downstream indexed from
its files."""

from __future__ import annotations

from pathlib import Path

import pytest

from prdigest.collect.facts import Surface, commit_facts, patch_facts
from prdigest.collect.git import UpstreamClone, read_commits
from prdigest.connect.impact.members import members, receiver_of
from prdigest.kernel.models import Impact
from tests.git_support import commit, commit_week, git, write
from tests.impact_support import line_in, match_downstream, upstream_impacts

CONFIG = '''
    from dataclasses import dataclass, field


    @dataclass
    class CompilationConfig:
        split_points: list[int] | None = None
        """Where compiled ranges split."""
        level: int = 0


    @dataclass
    class Config:
        split_points: list[int] | None = None


    @dataclass
    class VllmConfig:
        compilation_config: CompilationConfig = field(default_factory=CompilationConfig)
'''
#: renamed: the old name is gone from every class but the one-word ``Config``
RENAMED = CONFIG.replace("""class CompilationConfig:
        split_points:""", """class CompilationConfig:
        endpoints:""")
MINE = '''
    class AscendConfig:
        def __init__(self, vllm_config):
            self.vllm_config = vllm_config
            self.split_points = [1]

        def update_split_points(self):
            compilation_config = self.vllm_config.compilation_config
            points = compilation_config.split_points
            points.append(8)
            self.vllm_config.compilation_config.split_points = sorted(points)

        def own(self):
            return self.split_points

        def other(self, config, speculative_config):
            return config.split_points, speculative_config.split_points
'''


def _members(found: list[Impact]) -> list[tuple[int, str]]:
    return sorted((i.line, i.severity) for i in found if "named after" in i.fact)


def test_a_renamed_field_breaks_reads_and_assignments_on_an_object_named_after_its_class(tmp_path: Path) -> None:
    found = upstream_impacts(tmp_path, {"up/__init__.py": "", "up/config.py": CONFIG}, {"up/config.py": RENAMED},
                             {"ds/config.py": MINE})
    # one flag per function: the read through the local, not the downstream's own attribute, nor the one-word
    # ``config`` or another class's object
    assert _members(found) == [(line_in(MINE, "points = compilation_config.split_points"), "breaks")]
    [flag] = [i for i in found if "named after" in i.fact]
    assert flag.symbol == "up.config.CompilationConfig.split_points"


def test_an_assignment_alone_is_matched(tmp_path: Path) -> None:
    sets_only = MINE.replace("points = compilation_config.split_points", "points = [2]")
    found = upstream_impacts(tmp_path, {"up/__init__.py": "", "up/config.py": CONFIG}, {"up/config.py": RENAMED},
                             {"ds/config.py": sets_only})
    assert _members(found) == [(line_in(sets_only, "self.vllm_config.compilation_config.split_points ="),
                                "breaks")]


def test_a_field_the_class_keeps_is_not_flagged(tmp_path: Path) -> None:
    dropped = CONFIG.replace("        level: int = 0\n", "")
    found = upstream_impacts(tmp_path, {"up/__init__.py": "", "up/config.py": CONFIG}, {"up/config.py": dropped},
                             {"ds/config.py": MINE})
    assert _members(found) == []


def test_a_renamed_field_breaks_from_the_patch_alone(tmp_path: Path) -> None:
    [pr] = commit_week(tmp_path / "upstream", {"up/__init__.py": "", "up/config.py": CONFIG},
                       {1: ("Rename split points", {"up/config.py": RENAMED})})
    facts = patch_facts(pr, Surface(packages=("up",)))
    assert [(f.kind, f.symbol) for f in facts if "split_points" in f.symbol] == [
        ("attribute", "CompilationConfig.split_points")]
    assert _members(match_downstream(tmp_path, facts, {"ds/config.py": MINE})) == [
        (line_in(MINE, "points = compilation_config.split_points"), "breaks")]


def test_a_renamed_config_field_of_a_declared_config_file_breaks(tmp_path: Path) -> None:
    repo = tmp_path / "upstream"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, {"up/__init__.py": "", "up/config.py": CONFIG})
    commit(repo, "before")
    write(repo, {"up/config.py": RENAMED})
    sha = commit(repo, "rename")
    diffs, _ = read_commits(UpstreamClone(repo / ".git"), [sha])
    facts = commit_facts(diffs[sha], Surface(packages=("up",), config_files=(r"up/config\.py",)))
    config = [f for f in facts if f.kind == "config"]
    assert [(f.symbol, f.before, f.detail) for f in config] == [
        ("CompilationConfig.endpoints", "CompilationConfig.split_points", "renamed")]
    found = match_downstream(tmp_path, config, {"ds/config.py": MINE})
    assert _members(found) == [(line_in(MINE, "points = compilation_config.split_points"), "breaks")]
    assert all("→ endpoints" in i.fact for i in found if "named after" in i.fact)


@pytest.mark.parametrize(("cls", "receiver"), [
    ("CompilationConfig", "compilation_config"), ("KVTransferConfig", "kv_transfer_config"),
    ("VllmConfig", "vllm_config"), ("Outer.CacheConfig", "cache_config"), ("Request", None), ("Config", None),
])
def test_the_name_an_object_of_a_class_goes_by(cls: str, receiver: str | None) -> None:
    assert receiver_of(cls) == receiver


def test_members_leave_out_imported_roots_one_word_receivers_and_dunders() -> None:
    chains = [(("envs", "kv_cache", "x"), 1), (("self", "cache_config", "block_size"), 2),
              (("config", "block_size"), 3), (("cache_config", "__dict__"), 4), (("cache_config", "block_size"), 5)]
    assert members(chains, {"envs"}) == [("cache_config", "block_size", 2)]


#: the downstream reads and resets a field only where it exists: gone upstream, nothing fails
GUARDED = '''
    def reset_split_points(vllm_config):
        if getattr(vllm_config.compilation_config, "split_points", None):
            vllm_config.compilation_config.split_points = None


    def has_split_points(compilation_config):
        return hasattr(compilation_config, "split_points") and compilation_config.split_points


    def unguarded(compilation_config):
        return compilation_config.split_points
'''


def test_a_field_read_only_where_the_function_allows_for_its_absence_is_not_flagged(tmp_path: Path) -> None:
    found = upstream_impacts(tmp_path, {"up/__init__.py": "", "up/config.py": CONFIG}, {"up/config.py": RENAMED},
                             {"ds/reset.py": GUARDED})
    assert _members(found) == [(line_in(GUARDED, "return compilation_config.split_points"), "breaks")]


def test_every_function_that_reads_the_field_is_flagged(tmp_path: Path) -> None:
    twice = MINE + '''
    def log_points(vllm_config):
        print(vllm_config.compilation_config.split_points)
'''
    found = upstream_impacts(tmp_path, {"up/__init__.py": "", "up/config.py": CONFIG}, {"up/config.py": RENAMED},
                             {"ds/config.py": twice})
    assert _members(found) == [(line_in(twice, "points = compilation_config.split_points"), "breaks"),
                               (line_in(twice, "print(vllm_config"), "breaks")]
