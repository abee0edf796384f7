"""The benchmark's looser evidence, "stricter or later" (benchmarks/impact_later.py), on a downstream history
committed here with set dates: which later commit it reads, which lines a later change touches (a renamed file
followed), and the statement a flag's line belongs to."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from benchmarks.impact_later import changed_since, later_commit, later_evidence, statement
from prdigest.kernel.models import Impact
from tests.git_support import git, write

MODULE = '''from up.a import (
    One,
    Two,
)


class Mine(One):
    def __init__(self, config,
                 size):
        super().__init__(config)
        self.size = size


def build():
    return Two(1,
               2)
'''


def _commit(repo: Path, message: str, date: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "Dev", "GIT_AUTHOR_EMAIL": "dev@example.com", "GIT_COMMITTER_NAME": "Dev",
           "GIT_COMMITTER_EMAIL": "dev@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "-m", message], check=True, env=env)
    return git(repo, "rev-parse", "HEAD").strip()


def _impact(line: int) -> Impact:
    return Impact(downstream="ds", path="ds/mod.py", line=line, symbol="up.a.One", how="calls", severity="breaks",
                  fact="x")


def test_the_statement_of_a_line_is_a_whole_import_call_or_def_header(tmp_path: Path) -> None:
    (tmp_path / "ds").mkdir()
    (tmp_path / "ds/mod.py").write_text(MODULE, encoding="utf-8")
    assert statement(tmp_path, "ds/mod.py", 1) == {1, 2, 3, 4}  # the multi-line import
    assert statement(tmp_path, "ds/mod.py", 8) == {8, 9}  # a def: its header only, not its body
    assert statement(tmp_path, "ds/mod.py", 10) == {10}
    assert statement(tmp_path, "ds/mod.py", 15) == {15, 16}  # a call over two lines


def test_later_evidence_reads_the_last_commit_within_the_window_and_follows_a_rename(tmp_path: Path) -> None:
    repo = tmp_path / "ds-repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, {"ds/mod.py": MODULE})
    d0 = _commit(repo, "d0", "2026-04-01T10:00:00+00:00")
    write(repo, {"ds/other.py": "x = 1\n"})
    d1 = _commit(repo, "d1: the adaptation, which does not touch mod.py", "2026-05-10T10:00:00+00:00")
    git(repo, "mv", "ds/mod.py", "ds/moved.py")
    (repo / "ds/moved.py").write_text(MODULE.replace("    Two,\n", "    Three,\n").replace("\n               2)",
                                                                                       "\n               3)"),
                                      encoding="utf-8")
    git(repo, "add", "-A")
    later = _commit(repo, "later: the import and the call fixed, the file renamed", "2026-05-20T10:00:00+00:00")
    write(repo, {"ds/moved.py": MODULE.replace("super().__init__(config)", "super().__init__(config, size)")})
    _commit(repo, "after the end of the history read", "2026-06-02T10:00:00+00:00")
    sha, when = later_commit(repo / ".git", d1)
    assert (sha, when.date().isoformat()) == (later, "2026-05-20")  # not the June commit: past 2026-05-31
    changed = changed_since(repo / ".git", "ds", d0, sha)
    assert changed == {"ds/mod.py": {3, 16}}  # the rename alone changes no line
    flags = [_impact(1), _impact(8), _impact(10), _impact(15)]
    tree = tmp_path / "d0"
    (tree / "ds").mkdir(parents=True)
    (tree / "ds/mod.py").write_text(MODULE, encoding="utf-8")
    # the import's statement and the call's were changed later; the def header and the super() line were not
    assert later_evidence(flags, [], tree, changed) == [flags[0], flags[3]]
    assert later_evidence(flags, [flags[2]], tree, changed) == [flags[0], flags[2], flags[3]]


def test_a_d1_the_branch_does_not_hold_is_its_own_later_commit(tmp_path: Path) -> None:
    repo = tmp_path / "ds-repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, {"ds/mod.py": MODULE})
    _commit(repo, "d0", "2026-04-01T10:00:00+00:00")
    git(repo, "checkout", "-q", "-b", "side")
    write(repo, {"ds/side.py": "y = 2\n"})
    d1 = _commit(repo, "d1 on a side branch", "2026-05-01T10:00:00+00:00")
    assert later_commit(repo / ".git", d1)[0] == d1


def test_a_patch_counts_a_later_change_where_its_installed_function_is_defined(tmp_path: Path) -> None:
    from benchmarks.impact_later import installed_elsewhere

    tree = tmp_path / "d0"
    (tree / "ds").mkdir(parents=True)
    (tree / "ds/impl.py").write_text("import os\n\n\ndef g(x,\n      y=1):\n    return x\n", encoding="utf-8")
    (tree / "ds/patch.py").write_text("import up.a as a\n\nfrom ds.impl import g as mine\n\na.f = mine\n",
                                      encoding="utf-8")
    assert installed_elsewhere(tree, "ds/patch.py", 5) == ("ds/impl.py", {4, 5, 6})
    flag = Impact(downstream="ds", path="ds/patch.py", line=5, symbol="up.a.f", how="patches", severity="breaks",
                  fact="x")
    assert later_evidence([flag], [], tree, {"ds/impl.py": {5}}) == [flag]
    assert later_evidence([flag], [], tree, {"ds/impl.py": {1}}) == []  # another line of that module
