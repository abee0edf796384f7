"""The model sees the code: with ``--git`` the prompt holds hunks read from the clone (a real repository built
here), widened to the enclosing function; with or without it, the core change comes before tests, docs, data,
CI and lock files, led by what the title, the description and the facts point at."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from prdigest.collect.git import open_clone
from prdigest.collect.git.clone_hunks import clone_hunks
from prdigest.draft.packing import DraftContext, pack
from prdigest.kernel.models import FileChange, PullRequest
from prdigest.kernel.prtext.pointing import ranked_files, tier
from tests.git_support import commit, git, write
from tests.servers.openai_server import OpenAIServer
from tests.test_packing import MODEL, prompt_of, run_week

PLATFORM_BEFORE = '''
    """The device platform."""


    class AscendPlatform:
        """What the runtime knows of the device."""

        def check_runtime(self, version):
            if version < (8, 0):
                raise RuntimeError("CANN 8.0 or later is needed")
            return True
'''
PLATFORM_AFTER = '''
    """The device platform."""


    class AscendPlatform:
        """What the runtime knows of the device."""

        def check_runtime(self, version):
            if version < (9, 1):
                raise RuntimeError("CANN 9.1 or later is needed")
            if version >= (10, 0):
                warn_untested_cann(version)
            return True
'''
ODD = 'pkg/we"ird :(glob)*.py'  # a quote for git to C-quote, pathspec magic git must take literally


def _big(prefix: str, n: int) -> str:
    return "".join(f"{prefix} line {i} of the release table\n" for i in range(n))


@pytest.fixture(scope="module")
def upgrade(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, PullRequest]:
    """A repository whose one PR upgrades CANN: a few lines of code in the platform, hundreds of lines of version
    file, docs and a JSON table; the PR record as a ``--git`` GitHub source lists it (files without hunks)."""
    repo = tmp_path_factory.mktemp("upgrade") / "upstream"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "uploadpack.allowFilter", "true")  # served to a blob-less partial clone too
    git(repo, "config", "uploadpack.allowAnySHA1InWant", "true")
    write(repo, {"pkg/platform.py": PLATFORM_BEFORE, "version.info": "cann 8.0\n", "docs/install.md": "# Install\n",
                 "pkg/data/ops.json": "{}\n", ODD: "x = 1\n", "tests/test_platform.py": "def test_it():\n    pass\n"})
    commit(repo, "Initial layout")
    write(repo, {"pkg/platform.py": PLATFORM_AFTER, "version.info": _big("cann 9.1", 300),
                 "docs/install.md": _big("- docs", 200), "pkg/data/ops.json": _big('"op": 1,', 400),
                 ODD: "x = 2\n", "tests/test_platform.py": "def test_it():\n    assert True\n"})
    sha = commit(repo, "[Platform] Upgrade CANN to 9.1 (#42)")
    numstat = [line.split("\t") for line in git(repo, "-c", "core.quotePath=false", "show", "--numstat", "--format=",
                                                  sha).splitlines() if line]
    files = [FileChange(path=path, additions=int(a), deletions=int(d), status="modified") for a, d, path in numstat]
    files = [f.model_copy(update={"path": ODD}) if "ird" in f.path else f for f in files]  # git quotes it there
    pr = PullRequest(number=42, url="https://github.com/acme/pkg/pull/42", title="[Platform] Upgrade CANN to 9.1",
                     body="Bump the CANN runtime the platform accepts.", merged_at="2026-11-17T10:00:00Z",
                     files=files, additions=sum(f.additions for f in files),
                     deletions=sum(f.deletions for f in files), merge_commit=sha)
    return repo, pr


@pytest.mark.parametrize("path,expected", [
    ("pkg/platform.py", 0), ("csrc/attention.cu", 0), ("version.info", 2), ("pkg/data/ops.json", 2),
    ("tests/test_platform.py", 1), ("requirements/common.txt", 2), ("uv.lock", 2), (".github/workflows/ci.yml", 2),
    ("docs/install.md", 3), ("README.md", 3),
])
def test_each_path_has_its_tier(path: str, expected: int) -> None:
    assert tier(path) == expected


def test_the_code_change_ranks_before_the_version_file_docs_and_data_however_large(upgrade) -> None:
    _, pr = upgrade
    order = [f.path for f in ranked_files(pr)]
    assert order[0] == "pkg/platform.py"  # the title and body point at it ("platform"), and it is code
    assert order.index("tests/test_platform.py") < order.index("version.info")
    assert order[-1] == "docs/install.md"


def test_the_clone_gives_the_hunks_a_git_source_lacks(upgrade) -> None:
    repo, pr = upgrade
    clone = open_clone(str(repo), state_dir=repo.parent / "state")
    hunks = clone_hunks(clone, [pr])[42]
    expected = subprocess.run(["git", "-C", str(repo), "diff", f"{pr.merge_commit}^1", pr.merge_commit, "--",
                               "pkg/platform.py"], capture_output=True, text=True, check=True).stdout
    assert hunks["pkg/platform.py"] == expected[expected.index("@@"):].rstrip("\n")
    assert "+            warn_untested_cann(version)" in hunks["pkg/platform.py"]
    assert hunks[ODD].endswith("-x = 1\n+x = 2")  # a quoted path and pathspec magic: read literally
    assert set(hunks) == {f.path for f in pr.files}


def test_a_blobless_partial_clone_gives_the_same_hunks_fetching_the_blobs_in_one_batch(upgrade, tmp_path: Path
                                                                                      ) -> None:
    repo, pr = upgrade
    local = clone_hunks(open_clone(str(repo), state_dir=tmp_path / "local"), [pr])
    partial = open_clone(repo.as_uri(), state_dir=tmp_path / "kept")
    assert partial.partial
    before = partial.commands
    assert clone_hunks(partial, [pr]) == local
    assert partial.commands - before == 3  # the blob ids, one fetch of them all, the diff


def test_without_a_clone_the_rest_patches_are_ranked_the_same_way(upgrade) -> None:
    repo, pr = upgrade
    clone = open_clone(str(repo), state_dir=repo.parent / "state")
    hunks = clone_hunks(clone, [pr])[42]
    with_patches = pr.model_copy(update={"files": [f.model_copy(update={"patch": hunks[f.path]}) for f in pr.files]})
    packed = pack(with_patches, 1500)
    text = next(s.text for s in packed.sections if s.name == "hunks")
    assert text.index("--- pkg/platform.py") < text.index("--- version.info")
    assert "+        if version >= (10, 0):" in text


def test_with_git_the_prompt_holds_the_code_widened_to_its_function(upgrade, tmp_path: Path) -> None:
    repo, pr = upgrade
    record: dict[str, Any] = json.loads(pr.model_dump_json(exclude={"changes", "facts_source"}))
    with OpenAIServer(models=(MODEL,)) as server:
        digest = run_week([record], tmp_path, server, git=str(repo))
        user = prompt_of(server, 42)
    data = user[user.index("<pr-data>"):user.index("</pr-data>")]
    assert "--- pkg/platform.py" in data
    assert "+            warn_untested_cann(version)" in data
    assert "@@ in AscendPlatform (lines" in data  # widened to the enclosing function from the clone's text
    assert data.index("--- pkg/platform.py") < data.index("--- version.info")
    (entry,) = digest["entries"]
    assert entry["coverage"]["source"] == "git" and entry["coverage"]["lines_seen"] > 0


def test_a_context_hunk_never_replaces_the_sources_own_patch() -> None:
    pr = PullRequest(number=1, url="https://github.com/acme/pkg/pull/1", title="t", merged_at="2026-11-17T00:00:00Z",
                     files=[FileChange(path="pkg/a.py", additions=1, deletions=0, patch="@@ -1 +1,2 @@\n x\n+SOURCE")])
    packed = pack(pr, 2000, DraftContext(hunks={"pkg/a.py": "@@ -1 +1,2 @@\n x\n+CLONE"}))
    assert "+SOURCE" in packed.text and "+CLONE" not in packed.text


def test_the_github_collector_keeps_the_codes_hunks_when_large_data_files_fill_its_budget(tmp_path: Path) -> None:
    from datetime import datetime, timezone

    from prdigest.collect.github import GitHubSource
    from prdigest.kernel.window import Window
    from prdigest.state.store import LazyStore
    from tests.servers.github_server import GitHubServer, make_state

    def patch(prefix: str, n: int) -> str:
        return f"@@ -1,0 +1,{n} @@\n" + "".join(f"+{prefix} {i}\n" for i in range(n))

    record = {"number": 42, "url": "https://github.com/acme/pkg/pull/42", "title": "[Platform] Upgrade CANN to 9.1",
              "author": "amy", "merged_at": "2026-11-17T10:00:00Z", "labels": [], "review_comments": [],
              "body": "Bump the CANN runtime the platform accepts.", "additions": 714, "deletions": 1,
              "files": [{"path": "pkg/data/ops.json", "additions": 400, "deletions": 0, "status": "modified",
                         "patch": patch('"op": 1,', 400)},
                        {"path": "version.info", "additions": 300, "deletions": 0, "status": "modified",
                         "patch": patch("cann 9.1", 300)},
                        {"path": "pkg/platform.py", "additions": 14, "deletions": 1, "status": "modified",
                         "patch": patch("        if version >= (10, 0): warn()", 14)}]}
    budget = len(record["files"][0]["patch"]) + len(record["files"][1]["patch"])  # the two largest fill it
    with GitHubServer(make_state([record], "acme/pkg", token="t")) as server:
        source = GitHubSource("acme/pkg", token="t", base_url=server.url, state=LazyStore(tmp_path / "s.sqlite"),
                              patch_budget=budget)
        (pr,) = source.collect(Window(datetime(2026, 11, 16, tzinfo=timezone.utc),
                                      datetime(2026, 11, 23, tzinfo=timezone.utc)))
    kept = {f.path for f in pr.files if f.patch}
    assert "pkg/platform.py" in kept and len(kept) == 2  # before: the JSON and the version file, never the code


def test_a_github_week_with_a_clone_gives_every_code_prompt_its_hunks_without_asking_github_for_them(
        tmp_path: Path) -> None:
    from flows.media import default_media
    from prdigest.kernel.config import load_settings
    from prdigest.pipeline.compose import RunOptions, build_services
    from prdigest.pipeline.edition import EditionPipeline
    from tests.git_support import build_upstream
    from tests.servers.github_server import GitHubServer, make_state
    from tests.test_facts_run import RULES

    upstream = build_upstream(tmp_path / "repo")
    records = [json.loads(pr.model_dump_json(exclude={"changes", "facts_source"})) for pr in upstream.prs]
    (tmp_path / "rules.yaml").write_text(RULES)
    (tmp_path / "readers.yaml").write_text("readers:\n  - id: all\n    name: All\n    email: all@example.com\n")
    with GitHubServer(make_state(records, "acme/pkg", token="ghp_code-test")) as github, \
            OpenAIServer(models=(MODEL,)) as llm:
        options = RunOptions(source="github", repo="acme/pkg", out=str(tmp_path / "out"), drafter="openai",
                             rules=str(tmp_path / "rules.yaml"), readers=str(tmp_path / "readers.yaml"),
                             language="en", git=upstream.url, github_url=github.url, llm_base_url=llm.base_url,
                             model=MODEL, state=str(tmp_path / "state.sqlite"), since="2026-11-16",
                             until="2026-11-23")
        settings = load_settings(**options.settings_overrides(), github_token="ghp_code-test",
                                 OPENAI_API_KEY=llm.api_key, llm_rpm=60000)
        services = build_services(options, settings, default_media())
        try:
            EditionPipeline(services).run()
        finally:
            services.close()
        assert github.state.stats()["kinds"].get("files", 0) == 0  # the files and their hunks come from the clone
        coders = [pr for pr in upstream.prs if any(f.additions and tier(f.path) == 0 and f.path.endswith(".py")
                                                   for f in pr.files)]
        assert len(coders) >= 4
        for pr in coders:
            data = prompt_of(llm, pr.number)
            assert "Diff hunks, most telling files first:" in data, pr.number
            assert any(line.startswith("+") and not line.startswith("+++") for line in data.splitlines()), pr.number
