"""The benchmark's recall at each adaptation's parent: a row is matched against the downstream as it was just before
the commit that adapted to it, so a use written after d0 (for an earlier upstream change) is there to be found."""

from __future__ import annotations

from pathlib import Path

from benchmarks.impact_downstreams import downstream, render
from benchmarks.labelled_downstreams import Labelled
from tests.git_support import commit, git, write
from tests.impact_support import upstream_facts

UP_BEFORE = {"vllm/__init__.py": "", "vllm/ops.py": "def old_op(x):\n    return x\n\n\ndef keep(x):\n    return x\n"}
UP_AFTER = {"vllm/ops.py": "def keep(x):\n    return x\n"}


def test_a_use_added_after_d0_is_found_at_its_adaptation_parent_only(tmp_path: Path) -> None:
    facts = upstream_facts(tmp_path / "up", UP_BEFORE, {**UP_BEFORE, **UP_AFTER}, packages=("vllm",))
    assert [(c.kind, c.symbol) for c in facts if "old_op" in c.symbol] == [("removed", "old_op")], facts
    ds = tmp_path / "ds"
    ds.mkdir()
    git(ds, "init", "-q", "-b", "main")
    write(ds, {"plug/__init__.py": "", "plug/a.py": "from vllm.ops import keep\n\n\ndef run(x):\n    return keep(x)\n"})
    d0 = commit(ds, "plugin")
    write(ds, {"plug/b.py": "from vllm.ops import old_op\n\n\ndef late(x):\n    return old_op(x)\n"})
    commit(ds, "a use written after d0")
    write(ds, {"plug/b.py": "from vllm.ops import keep\n\n\ndef late(x):\n    return keep(x)\n"})
    fix = commit(ds, "adapt to old_op removed")
    labelled = Labelled(name="ds", data={"d0": d0, "d1": fix, "adaptations": [
        {"commit": fix, "upstream_prs": [7], "paths": ["plug/b.py"]}]}, gitdir=ds / ".git", packages=("plug",),
        source=tmp_path / "labels.json")
    root = tmp_path / "root"
    root.mkdir()
    result = downstream(labelled, root, {"full files": facts}, parents=True)["full files"]
    assert [row[3] for row in result["rows"]] == [False]  # at d0, plug/b.py did not exist
    assert result["at_parents"] == [(fix, 7, True)]
    result["by_hand"] = []
    section = render({"ds": {"full files": result}}, {"full files": len(facts)}, 1.0)
    assert "at each adaptation's parent" in section and "at its parent: yes" in section
    row = next(r for r in section.splitlines() if r.startswith("| ds"))
    assert row.startswith("| ds (2) | full files | 0.00 (0/1) |") and row.endswith("| 1.00 (1/1) |"), row
