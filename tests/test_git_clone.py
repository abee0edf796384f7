"""The upstream clone (prdigest/collect/git/): a bare blob-less partial clone kept in the state folder and
fetched once per run, or a given local clone; a week read in a fixed handful of git commands."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from prdigest.collect.git import GitUnavailable, open_clone, read_commits
from prdigest.collect.git.clone import clone_folder
from tests.git_support import Upstream, build_upstream, commit, git, write


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Upstream:
    return build_upstream(tmp_path_factory.mktemp("facts"))


def _objects(git_dir: Path) -> int:
    out = subprocess.run(["git", "--git-dir", str(git_dir), "count-objects", "-v"], capture_output=True, text=True,
                         check=True).stdout
    counts = dict(line.split(": ") for line in out.splitlines())
    return int(counts["count"]) + int(counts["in-pack"])


def test_a_url_is_kept_as_a_bare_blobless_clone_in_the_state_folder(upstream: Upstream, tmp_path: Path) -> None:
    clone = open_clone(upstream.url, state_dir=tmp_path)
    assert clone.git_dir == clone_folder(upstream.url, tmp_path) and clone.git_dir.parent == tmp_path / "git"
    assert clone.partial and clone.fetched
    config = (clone.git_dir / "config").read_text()
    assert "bare = true" in config and "partialclonefilter = blob:none" in config
    # No file contents came with the clone: only commits and trees.
    blobs = subprocess.run(["git", "--git-dir", str(clone.git_dir), "rev-list", "--objects", "--missing=print",
                            "--all"], capture_output=True, text=True, check=True).stdout
    assert blobs.count("\n?") >= len(upstream.commits)


def test_the_week_is_read_in_a_fixed_handful_of_commands_whatever_its_size(upstream: Upstream,
                                                                          tmp_path: Path) -> None:
    clone = open_clone(upstream.url, state_dir=tmp_path)
    before = clone.commands
    diffs, missing = read_commits(clone, upstream.commits.values())
    whole_week = clone.commands - before
    assert missing == [] and set(diffs) == set(upstream.commits.values())
    one = open_clone(upstream.url, state_dir=tmp_path / "other")
    start = one.commands
    read_commits(one, [upstream.commits[101]])
    assert whole_week == one.commands - start <= 7  # not one per commit, not one per file


def test_each_commit_is_read_against_its_first_parent_with_renames_and_full_texts(upstream: Upstream,
                                                                                  tmp_path: Path) -> None:
    clone = open_clone(upstream.url, state_dir=tmp_path)
    diffs, _ = read_commits(clone, upstream.commits.values())
    merge = diffs[upstream.commits[102]]  # a --no-ff merge of a two-commit branch
    assert merge.parent == git(upstream.path, "rev-parse", f"{upstream.commits[102]}^1").strip()
    by_path = {f.path: f for f in merge.files}
    assert by_path["pkg/helpers.py"].status == "R" and by_path["pkg/helpers.py"].old_path == "pkg/util.py"
    assert by_path["pkg/ops/moved.py"].status == "A" and by_path["pkg/ops/moved.py"].before is None
    layers = by_path["pkg/layers.py"]
    assert layers.status == "M" and "def moved_func" in layers.before and "def moved_func" not in layers.after
    assert layers.after == git(upstream.path, "show", f"{upstream.commits[102]}:pkg/layers.py")
    deleted = {f.path: f for f in diffs[upstream.commits[105]].files}["pkg/legacy.py"]
    assert deleted.status == "D" and deleted.after is None and "legacy_helper" in deleted.before


def test_the_kept_clone_is_fetched_once_per_run_and_sees_new_commits(tmp_path: Path) -> None:
    repo = tmp_path / "up"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "uploadpack.allowFilter", "true")
    write(repo, {"a.py": "def f(x):\n    return x\n"})
    first = commit(repo, "first")
    clone = open_clone(repo.as_uri(), state_dir=tmp_path / "state")
    write(repo, {"a.py": "def f(x, y):\n    return x\n"})
    second = commit(repo, "second")
    commands = clone.commands
    clone.fetch()  # the run's fetch is done: asking again does nothing
    assert clone.commands == commands
    rerun = open_clone(repo.as_uri(), state_dir=tmp_path / "state")  # the next run fetches
    assert git(repo, "rev-parse", "main").strip() == subprocess.run(
        ["git", "--git-dir", str(rerun.git_dir), "rev-parse", "main"], capture_output=True, text=True,
        check=True).stdout.strip()
    diffs, missing = read_commits(rerun, [first, second])
    assert missing == [] and diffs[second].files[0].after == "def f(x, y):\n    return x\n"


def test_a_local_clone_is_used_as_it_is(upstream: Upstream) -> None:
    clone = open_clone(str(upstream.path), state_dir=Path("/nonexistent"))
    assert clone.url is None and not clone.partial
    diffs, missing = read_commits(clone, [upstream.commits[104], "0" * 40, "not-a-sha"])
    assert sorted(missing) == sorted(["0" * 40, "not-a-sha"])
    assert {f.path for f in diffs[upstream.commits[104]].files} == {"csrc/kernels.cu", "pkg/triton_ops.py"}


@pytest.mark.parametrize("spec, words", [
    ("file:///nonexistent/upstream.git", "git clone failed"),
    ("/nonexistent/folder", "no such folder"),
])
def test_an_unreachable_clone_is_one_line_naming_it(spec: str, words: str, tmp_path: Path) -> None:
    with pytest.raises(GitUnavailable) as caught:
        open_clone(spec, state_dir=tmp_path)
    message = str(caught.value)
    assert "\n" not in message and words in message and "--git" in message
    assert not (tmp_path / "git").exists() or not any(p.name.endswith(".git") for p in (tmp_path / "git").iterdir())


def test_a_folder_that_is_no_repository_is_refused(tmp_path: Path) -> None:
    with pytest.raises(GitUnavailable, match="not a git repository"):
        open_clone(str(tmp_path), state_dir=tmp_path)


def test_a_token_in_the_url_never_reaches_the_message_or_the_folder_name(tmp_path: Path) -> None:
    url = "https://x-access-token:s3cr3t@127.0.0.1:9/acme/pkg.git"
    assert "s3cr3t" not in str(clone_folder(url, tmp_path))
    with pytest.raises(GitUnavailable) as caught:
        open_clone(url, state_dir=tmp_path)
    assert "s3cr3t" not in str(caught.value)
