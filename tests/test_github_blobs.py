"""Facts from the full files without a clone (``--source github``): each changed file before and after read
through the GitHub API at the merge commit and its parent, from the local GitHub server serving a real git
repository made here; the facts and impacts equal those read from the clone, none partial, cached by merge
commit (a warm run reads no file), and every request counted."""

from __future__ import annotations

import json

import pytest

from prdigest.pipeline.impact_report import impact_report
from tests.impact_support import build_world
from tests.servers.github_server import GitHubServer, make_state

TOKEN = "ghp_test-token-never-shown-0123456789"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory):
    return build_world(tmp_path_factory.mktemp("blobs"))


@pytest.fixture()
def github(world):
    records = [json.loads(line) for line in world.jsonl.read_text(encoding="utf-8").splitlines()]
    server = GitHubServer(make_state(records, "vllm-project/vllm", token=TOKEN,
                                     git_dir=world.upstream / ".git")).start()
    yield server
    server.stop()


def _impacts(report) -> dict[int, set[tuple]]:
    return {e.number: {(i.path, i.line, i.how, i.severity, i.fact, i.partial) for i in e.impact}
            for e in report.edition.entries}


@pytest.mark.parametrize("graphql", [True, False], ids=["graphql", "rest-only"])
def test_the_api_files_give_the_clones_facts_and_a_warm_run_reads_none(world, github, tmp_path, monkeypatch,
                                                                      graphql):
    github.state.graphql = graphql
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("DIGEST_GITHUB_URL", github.url)
    flags = dict(downstream=world.downstream, repo="vllm-project/vllm", since="2026-05-04", until="2026-05-05",
                 name="ascend", packages=("ds",), upstream=("vllm",), language="en")
    from_git = impact_report(source=f"jsonl:{world.jsonl}", git=str(world.upstream),
                             state=str(tmp_path / "git.sqlite"), **flags)
    github.state.reset_counters()
    from_api = impact_report(source="github", state=str(tmp_path / "api.sqlite"), **flags)
    assert _impacts(from_api) == _impacts(from_git)
    assert not any(i.partial for e in from_api.edition.entries for i in e.impact)
    assert {e.number: e.coverage.source for e in from_api.edition.entries} == {n: "git" for n in range(101, 109)}
    kinds = github.state.stats()["kinds"]
    # The 18 sides of the changed Python files are 16 files at a commit: where one PR's merge commit is the next
    # one's parent and both change a file, that file is read once.
    if graphql:  # one query for the 8 merge commits' parents, one for the 16 files
        assert kinds["graphql_objects"] == 2 and "git_commit" not in kinds and "contents" not in kinds
    else:  # a GitHub without GraphQL: one commit request per merge commit, one contents request per file
        assert kinds["git_commit"] == 8 and kinds["contents"] == 16 and "graphql_objects" not in kinds
    github.state.reset_counters()
    warm = impact_report(source="github", state=str(tmp_path / "api.sqlite"), **flags)
    assert _impacts(warm) == _impacts(from_git)
    kinds = github.state.stats()["kinds"]
    # The facts are cached by merge commit, and each PR's merge commit is kept: no closed-PR list either.
    assert not {"contents", "git_commit", "graphql_objects", "pull_list"} & set(kinds)


def test_the_source_counts_the_file_requests(world, github, tmp_path):
    from datetime import datetime, timezone

    from prdigest.collect.github.source import GitHubSource
    from prdigest.kernel.window import Window
    from prdigest.state.store import open_store

    with open_store(tmp_path / "s.sqlite") as store:
        source = GitHubSource("vllm-project/vllm", token=TOKEN, base_url=github.url, state=store, concurrency=2)
        prs = source.collect(Window(datetime(2026, 5, 4, tzinfo=timezone.utc), datetime(2026, 5, 5, tzinfo=timezone.utc)))
        before = source.stats.requests
        assert all(pr.merge_commit is None for pr in prs)  # the search and the files give none
        readable = source.commit_reader(prs)
        assert readable is not None
        prs, read = readable
        diffs, missing = read([pr.merge_commit.lower() for pr in prs[:2]])
        assert missing == [] and len(diffs) == 2
        moe = next(f for f in diffs[prs[0].merge_commit.lower()].files if f.path.endswith("fused_moe/layer.py"))
        assert "dtype=None" in moe.before and "dtype=None" not in moe.after
        # The closed-PR list (the merge commits), one GraphQL query for both commits' parents, one for the 6 sides
        # of their changed Python files (#101 changes one, #102 two).
        assert source.stats.requests - before == source.stats.file_requests == 1 + 1 + 1
        assert github.state.stats()["requests"] == source.stats.requests
        routes = source.stats.routes
        assert (routes["pulls (closed)"], routes["graphql (merge commits)"], routes["graphql (files)"]) == (1, 1, 1)
        assert sum(routes.values()) == source.stats.requests


def test_without_a_token_the_refused_graphql_is_tried_once_for_the_discussion_and_the_files(world, tmp_path):
    from datetime import datetime, timezone

    from prdigest.collect.github.source import GitHubSource
    from prdigest.kernel.window import Window
    from prdigest.state.store import open_store

    records = [json.loads(line) for line in world.jsonl.read_text(encoding="utf-8").splitlines()]
    state = make_state(records, "vllm-project/vllm", git_dir=world.upstream / ".git")  # REST needs no token
    state.graphql_needs_token = True  # GraphQL does: 401
    with GitHubServer(state) as server, open_store(tmp_path / "s.sqlite") as store:
        source = GitHubSource("vllm-project/vllm", token=None, base_url=server.url, state=store, concurrency=2)
        prs = source.collect(Window(datetime(2026, 5, 4, tzinfo=timezone.utc), datetime(2026, 5, 5, tzinfo=timezone.utc)))
        readable = source.commit_reader(prs)
        assert readable is not None
        prs, read = readable
        diffs, missing = read([pr.merge_commit.lower() for pr in prs])
        kinds = state.stats()["kinds"]
    assert missing == [] and len(diffs) == len(prs)
    # the reviews query learnt GraphQL refuses: the files go straight to REST, not after a second refusal
    assert kinds["auth"] == 1 and kinds["git_commit"] == len(prs)
    assert source.stats.routes["graphql"] == 1 and "graphql (merge commits)" not in source.stats.routes
