"""What reaches git's argv (prdigest/kernel/gitvalues.py, prdigest/collect/git/argv.py): a readers file, ``--git``
or GitHub's ``merge_commit_sha`` that git would read as an option or as a command-running transport is refused
before git runs, and runs nothing; the transports are pinned whatever the environment says; a URL's token never
lands in the kept clone's config; what is kept in the state folder is the operator's alone."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pytest

from prdigest.collect.git import GitUnavailable, open_clone
from prdigest.collect.git.argv import PROTOCOL_CONFIG, Remote, git_env
from prdigest.collect.git.clone import UpstreamClone
from prdigest.collect.git.texts import after_texts
from prdigest.connect.impact.downstream import DownstreamSpec, fetch_clone
from prdigest.kernel.config import load_settings
from prdigest.kernel.errors import ConfigError, DownstreamError
from prdigest.kernel.gitvalues import location_problem, ref_problem, sha_problem
from prdigest.readers.file import load_readers
from tests.git_support import Upstream, build_upstream, commit, git, write

#: Each would run ``touch PWNED`` in git's working folder if it reached git as it is.
HOSTILE = ["--upload-pack=touch PWNED;", "ext::sh -c touch% PWNED", "ext::sh -c 'touch PWNED'",
           " --upload-pack=touch PWNED;", "-c core.sshCommand=touch PWNED"]


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Upstream:
    return build_upstream(tmp_path_factory.mktemp("argv"))


@pytest.fixture
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh working folder: where ``touch PWNED`` would leave its file."""
    folder = tmp_path / "cwd"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


def _pwned(root: Path) -> list[Path]:
    return list(root.rglob("PWNED"))


@pytest.mark.parametrize("value, refused", [
    *[(v, True) for v in HOSTILE],
    ("http://example.com/a/b.git", True), ("git://example.com/a/b.git", True), ("fd::3", True),
    ("ssh://-oProxyCommand=touch%20PWNED/x", True), ("https://x\n--upload-pack=y", True),
    ("https://github.com/vllm-project/vllm-ascend.git", False), ("ssh://git@github.com/a/b.git", False),
    ("git@github.com:a/b.git", False), ("file:///srv/clones/a.git", False), ("/srv/clones/a", False),
    ("clones/a", False),
])
def test_a_repository_location_is_a_url_or_a_path_never_an_option_or_a_command(value: str, refused: bool) -> None:
    assert (location_problem(value) is not None) == refused


@pytest.mark.parametrize("ref", ["main", "release/v0.9", "v1.2.3", "refs/heads/x", "a-b_c"])
def test_a_ref_git_accepts_is_accepted(ref: str) -> None:
    assert ref_problem(ref) is None
    assert subprocess.run(["git", "check-ref-format", "--allow-onelevel", ref]).returncode == 0


@pytest.mark.parametrize("ref", ["-x", "--upload-pack=touch PWNED;", "a..b", ".hidden", "x.lock", "a b", "a~1",
                                 "a^", "a:b", "a/", "a//b", "@", "x@{1}", "a\\b", "a*"])
def test_a_ref_starting_with_a_dash_or_not_a_ref_name_is_refused(ref: str) -> None:
    assert ref_problem(ref) is not None
    if not ref.startswith("-"):  # git agrees (it cannot be asked about one starting with '-': an option)
        assert subprocess.run(["git", "check-ref-format", "--allow-onelevel", ref]).returncode != 0


@pytest.mark.parametrize("sha", ["--output=PWNED", "HEAD", "abc", "g" * 40, "ab" * 20 + "\n--x"])
def test_a_commit_id_is_hex_only(sha: str) -> None:
    assert sha_problem(sha) is not None and sha_problem("ab" * 20) is None


@pytest.mark.parametrize("value", HOSTILE)
def test_a_hostile_downstream_git_in_the_readers_file_is_one_error_naming_the_field(value: str, tmp_path: Path,
                                                                                    cwd: Path) -> None:
    path = tmp_path / "readers.yaml"
    path.write_text("readers:\n  - id: a\n    name: A\n    email: a@example.com\n    downstream: ascend\n"
                    f"downstreams:\n  ascend:\n    git: {json.dumps(value)}\n    packages: [ds]\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_readers(path)
    message = str(caught.value)
    assert "\n" not in message and f"{path}:8" in message and "downstreams.ascend.git" in message
    assert _pwned(tmp_path) == []


def test_a_downstream_ref_starting_with_a_dash_is_refused_naming_the_field(tmp_path: Path) -> None:
    path = tmp_path / "readers.yaml"
    path.write_text("readers:\n  - id: a\n    name: A\n    email: a@example.com\n"
                    "downstreams:\n  ascend:\n    git: https://example.com/a.git\n    ref: --upload-pack=x\n",
                    encoding="utf-8")
    with pytest.raises(ConfigError, match=r"readers\.yaml:8: .*downstreams\.ascend\.ref"):
        load_readers(path)


@pytest.mark.parametrize("value", HOSTILE)
def test_a_hostile_downstream_that_skipped_the_readers_file_runs_nothing(value: str, tmp_path: Path,
                                                                         cwd: Path) -> None:
    with pytest.raises(DownstreamError, match="downstream 'ascend'"):
        fetch_clone(DownstreamSpec("ascend", git=value, packages=("ds",)), tmp_path / "state")
    with pytest.raises(DownstreamError, match="downstream 'ascend'"):
        fetch_clone(DownstreamSpec("ascend", git=str(tmp_path), ref="--upload-pack=touch PWNED;"), tmp_path / "s2")
    assert _pwned(tmp_path) == []


@pytest.mark.parametrize("value", HOSTILE)
def test_a_hostile_git_flag_is_a_config_error_naming_the_flag_and_open_clone_refuses_it(value: str,
                                                                                        tmp_path: Path,
                                                                                        cwd: Path) -> None:
    with pytest.raises(ConfigError, match=r"--git") as caught:
        load_settings(git=value)
    assert "\n" not in str(caught.value)
    with pytest.raises(GitUnavailable, match=r"--git"):
        open_clone(value, state_dir=tmp_path / "state")
    assert _pwned(tmp_path) == []


def test_a_hostile_merge_commit_never_reaches_git(upstream: Upstream, tmp_path: Path, cwd: Path) -> None:
    clone = open_clone(str(upstream.path), state_dir=tmp_path)
    pr = upstream.prs[0]
    # model_copy skips the model's own check, as the GitHub source's merge_commit_sha did.
    hostile = pr.model_copy(update={"merge_commit": "--output=PWNED"})
    before = clone.commands
    assert after_texts(clone, [hostile]) == {}
    assert clone.commands == before and _pwned(tmp_path) == []
    assert after_texts(clone, [pr])  # the same PR with its real sha is read


def test_a_github_merge_commit_sha_that_is_not_hex_is_dropped(tmp_path: Path, caplog: pytest.LogCaptureFixture
                                                             ) -> None:
    from prdigest.collect.github.client import Clients
    from prdigest.collect.github.source import merge_commits
    from prdigest.kernel.window import Window
    from tests.servers.github_server import GitHubServer, make_state

    def record(number: int, sha: str) -> dict[str, object]:
        return {"number": number, "url": f"https://github.com/acme/pkg/pull/{number}", "title": "t",
                "author": "dev", "created_at": "2026-11-17T10:00:00+00:00",
                "merged_at": "2026-11-17T11:00:00+00:00", "labels": [], "body": "", "files": [],
                "additions": 0, "deletions": 0, "review_comments": [], "merge_commit": sha}

    server = GitHubServer(make_state([record(1, "--output=PWNED"), record(2, "ab" * 20)], "acme/pkg",
                                     token="t")).start()
    clients = Clients(server.url, "t", retry=None, timeout=10, seconds_between_requests=None)
    try:
        window = Window(datetime(2026, 11, 16, tzinfo=timezone.utc), datetime(2026, 11, 23, tzinfo=timezone.utc))
        found, _ = merge_commits(clients, "acme/pkg", window)
    finally:
        clients.close()
        server.stop()
    assert found == {2: "ab" * 20}
    assert any("acme/pkg#1" in r.getMessage() and "merge_commit_sha" in r.getMessage() for r in caplog.records)


def test_the_transports_are_pinned_whatever_the_environment_allows(tmp_path: Path, cwd: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # An operator's (or a hostile) environment that allows ext:: is overridden for every git we run.
    monkeypatch.setenv("GIT_ALLOW_PROTOCOL", "ext:file:https")
    bare = tmp_path / "c.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    clone = UpstreamClone(bare)
    with pytest.raises(GitUnavailable, match="fetch"):
        clone.run(["fetch", "--quiet", "ext::sh -c touch% PWNED", "main"], what="fetch")
    assert _pwned(tmp_path) == [] and _pwned(bare) == []
    assert git_env()["GIT_ALLOW_PROTOCOL"] == "https:ssh:file"
    assert "protocol.allow=never" in PROTOCOL_CONFIG and "protocol.ext.allow=always" not in PROTOCOL_CONFIG


def test_a_token_in_the_git_url_never_lands_in_the_kept_clone(upstream: Upstream, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # git itself maps the https URL to the test's repository (url.<base>.insteadOf), after our code stripped
    # the token: what the clone keeps is what the URL looked like when git was given it.
    config = tmp_path / "gitconfig"
    config.write_text(f'[url "{upstream.url}"]\n\tinsteadOf = https://git.example.test/acme/pkg.git\n')
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    token = "ghp_SeCrEt0123456789"
    spec = f"https://x-access-token:{token}@git.example.test/acme/pkg.git"
    state = tmp_path / "state"
    clone = open_clone(spec, state_dir=state)
    assert clone.partial and token not in clone.name
    for path in [p for p in clone.git_dir.rglob("*") if p.is_file()]:
        assert token.encode() not in path.read_bytes(), path
    assert "url = https://git.example.test/acme/pkg.git" in (clone.git_dir / "config").read_text()
    assert stat.S_IMODE(os.stat(clone.git_dir / "config").st_mode) == 0o600
    assert stat.S_IMODE(os.stat(state / "git").st_mode) == 0o700
    assert stat.S_IMODE(os.stat(clone.git_dir).st_mode) & 0o077 == 0
    again = open_clone(spec, state_dir=state)  # fetched with the token passed again, per command
    assert again.fetched


def test_a_clone_kept_by_an_earlier_version_forgets_its_token(upstream: Upstream, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "gitconfig"
    config.write_text(f'[url "{upstream.url}"]\n\tinsteadOf = https://git.example.test/acme/pkg.git\n')
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    spec = "https://ghp_OldToken42@git.example.test/acme/pkg.git"
    clone = open_clone(spec, state_dir=tmp_path)
    git(clone.git_dir, "config", "remote.origin.url", spec)  # what the earlier version wrote
    os.chmod(clone.git_dir / "config", 0o644)
    open_clone(spec, state_dir=tmp_path)
    text = (clone.git_dir / "config").read_text()
    assert "ghp_OldToken42" not in text and "url = https://git.example.test/acme/pkg.git" in text
    assert stat.S_IMODE(os.stat(clone.git_dir / "config").st_mode) == 0o600


def test_the_credential_helper_answers_from_the_process_environment_only(tmp_path: Path) -> None:
    remote = Remote.parse("https://x-access-token:ghp_tok%40en@git.example.test/acme/pkg.git")
    assert remote.url == "https://git.example.test/acme/pkg.git" and remote.password == "ghp_tok@en"
    argv = ["git", *PROTOCOL_CONFIG, *remote.config(), "credential", "fill"]
    assert not any("ghp_tok" in a for a in argv)
    done = subprocess.run(argv, input=b"protocol=https\nhost=git.example.test\n\n", capture_output=True,
                          env=remote.env(git_env()), check=True, cwd=tmp_path)
    assert b"username=x-access-token\n" in done.stdout and b"password=ghp_tok@en\n" in done.stdout


def test_a_downstream_clone_is_kept_for_the_operator_alone(tmp_path: Path) -> None:
    repo = tmp_path / "ds"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, {"ds/__init__.py": ""})
    commit(repo, "one")
    clone, sha = fetch_clone(DownstreamSpec("ascend", git=repo.as_uri(), packages=("ds",)), tmp_path / "state")
    assert len(sha) == 40
    assert stat.S_IMODE(os.stat(tmp_path / "state" / "downstreams").st_mode) == 0o700
    assert stat.S_IMODE(os.stat(clone / "config").st_mode) & 0o077 == 0


def test_a_token_in_a_downstream_git_url_never_lands_in_its_clone(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "ds"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, {"ds/__init__.py": "", "ds/a.py": "import vllm\n"})
    commit(repo, "one")
    config = tmp_path / "gitconfig"
    config.write_text(f'[url "{repo.as_uri()}"]\n\tinsteadOf = https://git.example.test/team/ds.git\n')
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    token = "ghp_DownstreamToken77"
    clone, sha = fetch_clone(DownstreamSpec("ascend", git=f"https://{token}@git.example.test/team/ds.git",
                                            packages=("ds",)), tmp_path / "state")
    assert len(sha) == 40
    for path in [p for p in clone.rglob("*") if p.is_file()]:
        assert token.encode() not in path.read_bytes(), path


SSH_PASSWORD = "hunter2-ssh-Secret"


def test_a_password_in_an_ssh_url_is_refused_naming_the_field_before_any_clone(upstream: Upstream, tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch
                                                                               ) -> None:
    # git would fetch this URL from the local upstream (insteadOf), and keep it, password and all, in the clone's
    # config as remote.origin.url: only https credentials go through the credential helper.
    url = f"ssh://digest:{SSH_PASSWORD}@git.example.test/team/up.git"
    config = tmp_path / "gitconfig"
    config.write_text(f'[url "{upstream.path.as_uri()}"]\n\tinsteadOf = {url}\n')
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    with pytest.raises(ConfigError, match=r"--git.*password.*key") as flag:
        load_settings(git=url)
    with pytest.raises(GitUnavailable, match=r"--git.*password") as opened:
        open_clone(url, state_dir=tmp_path / "state")
    readers = tmp_path / "readers.yaml"
    readers.write_text("readers:\n  - id: a\n    name: A\n    email: a@example.com\n    downstream: ascend\n"
                       f"downstreams:\n  ascend:\n    git: {url}\n    packages: [ds]\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"readers\.yaml:8: .*downstreams\.ascend\.git.*password") as listed:
        load_readers(readers)
    with pytest.raises(DownstreamError, match=r"downstream 'ascend'.*password") as fetched:
        fetch_clone(DownstreamSpec("ascend", git=url, packages=("ds",)), tmp_path / "state")
    for caught in (flag, opened, listed, fetched):
        assert SSH_PASSWORD not in str(caught.value) and "\n" not in str(caught.value)
    kept = [p for p in tmp_path.rglob("*") if p.is_file() and p not in (config, readers)]
    assert not [p for p in kept if SSH_PASSWORD.encode() in p.read_bytes()]


def test_an_ssh_url_with_a_user_name_only_is_still_a_location() -> None:
    assert location_problem("ssh://git@github.com/a/b.git") is None
    assert location_problem("ssh://git:@github.com/a/b.git") is not None  # an empty password is one too
