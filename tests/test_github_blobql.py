"""The files of merge commits read many a GraphQL query (prdigest/collect/github/blobql.py, blobs.py), against the
local GitHub server serving a real git repository made here: hostile path names travel as variables, a text
GraphQL cuts short is asked through REST alone, a path the commit lacks is ``null``, a binary or too large file
is skipped and named, a lone surrogate never reaches the facts, and a GitHub without GraphQL gives the same."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import pytest

from prdigest.collect.facts import Surface, commit_facts
from prdigest.collect.github.blobql import objects
from prdigest.collect.github.blobs import MAX_BYTES, BlobReader
from prdigest.collect.github.client import Clients, default_retry
from prdigest.kernel.models import FileChange, PullRequest
from tests.git_support import commit, git
from tests.servers.github_server import GitHubServer, make_state

TOKEN = "ghp_blobql-test-token-0123456789"
REPO = "acme/widgets"

#: Paths that break a query built by pasting strings: quotes, backslashes, a newline, GraphQL injection.
HOSTILE = [
    'pkg/q"uote.py',
    "pkg/back\\slash.py",
    "pkg/new\nline.py",
    'pkg/x") { a } b0: object(expression: "HEAD:pkg/plain.py.py',
    "pkg/$b0 ${name}.py",
    "pkg/colon:after.py",
    "pkg/space ?#%20.py",
    "pkg/ünï çødé.py",
]


@dataclass
class Repo:
    """The served repository: the base commit and the commit a PR merged as, and that PR."""

    path: Path
    base: str
    merged: str
    pr: PullRequest


def _write(repo: Path, files: dict[str, bytes | None]) -> None:
    for path, data in files.items():
        if data is None:
            git(repo, "rm", "-q", "--", path)
            continue
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_bytes(data)
        git(repo, "add", "--", path)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    root = tmp_path_factory.mktemp("blobql")
    git(root, "init", "-q", "-b", "main")
    before: dict[str, bytes | None] = {p: f"def old_{i}(a):\n    return a\n".encode() for i, p in enumerate(HOSTILE)}
    before.update({"pkg/plain.py": b"def f(a):\n    return a\n", "pkg/gone.py": b"def g():\n    pass\n",
                   "pkg/long.py": b"def h(a):\n    return a\n", "pkg/blob.py": b"x = 1\n",
                   "pkg/huge.py": b"x = 1\n"})
    _write(root, before)
    base = commit(root, "base")
    after: dict[str, bytes | None] = {p: f"def new_{i}(a, b):\n    return a\n".encode() for i, p in enumerate(HOSTILE)}
    after.update({
        "pkg/plain.py": b"def f(a, b=2):\n    return a\n",
        "pkg/gone.py": None,
        "pkg/long.py": b"def h(a, *, wide=True):\n" + b"    # padding line of a long file\n" * 40 + b"    return a\n",
        "pkg/blob.py": b"x = 1\n\0\x01\x02binary\n",
        "pkg/huge.py": b"# big\n" + b"y = 1\n" * (MAX_BYTES // 6 + 10),
        "pkg/surrogate.py": 'def s(a):\n    return "\\ud800"  # text: '.encode() + b"\xed\xa0\x80\n",
    })
    _write(root, after)
    merged = commit(root, "the PR")
    paths = [*HOSTILE, "pkg/plain.py", "pkg/long.py", "pkg/blob.py", "pkg/huge.py"]
    files = [FileChange(path=p, additions=2, deletions=2) for p in paths]
    files += [FileChange(path="pkg/gone.py", deletions=2, status="removed"),
              FileChange(path="pkg/surrogate.py", additions=2, status="added"),
              # GitHub lists it modified, but the parent never had it: that side is null, nothing fails
              FileChange(path="pkg/never.py", additions=1, deletions=1),
              FileChange(path="docs/readme.md", additions=1)]
    pr = PullRequest(number=7, url=f"https://github.com/{REPO}/pull/7", merged_at=datetime(2026, 5, 4,
                     tzinfo=timezone.utc), files=files, merge_commit=merged)
    return Repo(root, base, merged, pr)


@pytest.fixture()
def server(repo: Repo) -> Iterator[GitHubServer]:
    srv = GitHubServer(make_state([], REPO, token=TOKEN, git_dir=repo.path / ".git")).start()
    yield srv
    srv.stop()


def _read(server: GitHubServer, repo: Repo, shas: list[str] | None = None):
    clients = Clients(server.url, TOKEN, retry=default_retry(backoff_factor=0.01, total=2), timeout=10,
                      seconds_between_requests=None)
    try:
        reader = BlobReader(clients, REPO, {repo.merged: repo.pr}, concurrency=2)
        diffs, missing = reader(shas or [repo.merged])
    finally:
        clients.close()
    return reader, diffs, missing


def _by_path(diffs, sha):
    return {f.path: f for f in diffs[sha].files}


def test_hostile_paths_are_variables_and_read_whole_in_two_queries(server, repo):
    reader, diffs, missing = _read(server, repo)
    assert missing == []
    files = _by_path(diffs, repo.merged)
    for i, path in enumerate(HOSTILE):
        assert files[path].before == f"def old_{i}(a):\n    return a\n", path
        assert files[path].after == f"def new_{i}(a, b):\n    return a\n", path
    assert diffs[repo.merged].parent == repo.base
    kinds = server.state.stats()["kinds"]
    # One query for the commit's parent, one for every file (28 sides); the long file is whole within the limit.
    assert kinds["graphql_objects"] == 2 and "contents" not in kinds and "graphql" not in kinds
    assert reader.routes == {"graphql (merge commits)": 1, "graphql (files)": 1}
    # No path (nor any piece of one) is query text: each travels as a variable.
    queries = server.state.graphql_queries
    assert len(queries) == 2 and not any(p in q or p.split("/")[1][:4] in q for p in HOSTILE for q in queries)


def test_a_text_graphql_cuts_short_is_asked_through_rest_alone(server, repo):
    server.state.blob_text_limit = 200  # the long file's after side (1.3 KB) is cut; every other is shorter
    reader, diffs, _ = _read(server, repo)
    long = _by_path(diffs, repo.merged)["pkg/long.py"]
    assert long.after is not None and long.after.startswith("def h(a, *, wide=True):") and long.after.endswith(
        "    return a\n")
    assert long.skipped == ""
    kinds = server.state.stats()["kinds"]
    assert kinds["contents"] == 1 and kinds["graphql_objects"] == 2
    assert reader.routes["contents"] == 1


def test_missing_binary_and_too_large_files_are_named_not_fetched_again(server, repo):
    _, diffs, _ = _read(server, repo)
    files = _by_path(diffs, repo.merged)
    assert files["pkg/gone.py"].before == "def g():\n    pass\n" and files["pkg/gone.py"].after is None
    never = files["pkg/never.py"]  # null on both sides: no text, not skipped (nothing there to read)
    assert (never.before, never.after, never.skipped) == (None, None, "")
    assert files["pkg/blob.py"].skipped == "binary" and files["pkg/blob.py"].after is None
    assert files["pkg/huge.py"].skipped == "too large" and files["pkg/huge.py"].after is None
    assert files["docs/readme.md"].skipped == "not read"  # not a file the facts engine reads: never asked
    assert "contents" not in server.state.stats()["kinds"]


def test_a_lone_surrogate_in_a_files_text_becomes_a_replacement_character(server, repo):
    _, diffs, _ = _read(server, repo)
    text = _by_path(diffs, repo.merged)["pkg/surrogate.py"].after
    assert text is not None and text.endswith("\ufffd\n") and '"\\ud800"' in text
    text.encode("utf-8")  # raises on a lone surrogate: SQLite, hashing and ast all need this to work


def test_a_merge_commit_github_lacks_is_missing_not_an_error(server, repo):
    _, diffs, missing = _read(server, repo, [repo.merged, "0" * 40])
    assert missing == ["0" * 40] and list(diffs) == [repo.merged]


def test_without_graphql_the_rest_requests_give_the_same_files(server, repo):
    _, by_graphql, _ = _read(server, repo)
    server.state.graphql = False
    server.state.reset_counters()
    reader, by_rest, _ = _read(server, repo)
    assert _texts(by_rest) == _texts(by_graphql)
    facts = [commit_facts(d[repo.merged], Surface()) for d in (by_graphql, by_rest)]
    assert facts[0] == facts[1] and any(c.kind == "signature" and "plain" in c.path for c in facts[0])
    kinds = server.state.stats()["kinds"]
    # The commit, then a contents request per side asked (28: two for each of the 13 files changed in place,
    # none for the absent side of the added and the removed file); the one refused GraphQL query is counted too,
    # and 404s are the refused query and pkg/never.py's two sides.
    assert kinds["git_commit"] == 1 and kinds["not_found"] == 1 + 2 and kinds["contents"] == 28 - 2
    assert reader.routes == {"graphql (merge commits)": 1, "git/commits": 1, "contents": 28}


def _texts(diffs):
    """Each file's sides, the lone surrogate's replacement counted once (REST's decoder writes one per byte)."""
    return {(sha, f.path): tuple(None if t is None else t.replace("\ufffd\ufffd\ufffd", "\ufffd")
                                 for t in (f.before, f.after)) + (f.skipped,)
            for sha, d in diffs.items() for f in d.files}


def test_the_query_text_holds_no_path_and_the_server_refuses_a_literal(server, repo):
    clients = Clients(server.url, TOKEN, retry=default_retry(backoff_factor=0.01, total=2), timeout=10,
                      seconds_between_requests=None)
    try:
        nodes = objects(clients, REPO, "expression", [f'{repo.merged}:{HOSTILE[3]}', f"{repo.merged}:pkg/nope.py"])
        assert nodes is not None and nodes[0]["text"] == "def new_3(a, b):\n    return a\n" and nodes[1] is None
        gh = clients.get()
        # A query that writes the path into its text is what the stand-in (like a careful reader) refuses.
        _, answer = gh.requester.requestJsonAndCheck("POST", gh.requester.graphql_url, input={
            "query": 'query($owner: String!, $name: String!) { repository(owner: $owner, name: $name) { '
                     f'b0: object(expression: "{repo.merged}:pkg/plain.py") {{ ... on Blob {{ text }} }} }} }}',
            "variables": {"owner": "acme", "name": "widgets"}})
        assert "data" not in answer and answer["errors"]
    finally:
        clients.close()


def test_an_object_an_error_names_is_asked_through_rest_never_taken_for_absent(server, repo):
    # GitHub answers null for the alias and names it in an error (a timeout, "something went wrong"): a file
    # taken for absent would turn every name of it into an added one.
    server.state.failing_objects.add(f"{repo.merged}:pkg/plain.py")
    reader, diffs, _ = _read(server, repo)
    plain = _by_path(diffs, repo.merged)["pkg/plain.py"]
    assert plain.after == "def f(a, b=2):\n    return a\n" and plain.before == "def f(a):\n    return a\n"
    assert server.state.stats()["kinds"]["contents"] == 1 and reader.routes["contents"] == 1


def test_a_query_github_refuses_as_too_heavy_is_asked_again_in_halves(server, repo):
    server.state.graphql_max_objects = 10  # the 28 files in one query time out; 7 at a time go through
    reader, diffs, _ = _read(server, repo)
    assert _by_path(diffs, repo.merged)["pkg/plain.py"].after == "def f(a, b=2):\n    return a\n"
    kinds = server.state.stats()["kinds"]
    # 28 refused, 14 + 14 refused, then four of 7: no file through REST
    assert kinds["graphql_refused"] == 3 and kinds["graphql_objects"] == 1 + 4 and "contents" not in kinds
    assert reader.routes["graphql (files)"] == 7


def test_a_query_refused_even_for_a_few_files_sends_those_to_rest(server, repo):
    server.state.graphql_max_objects = 2
    reader, diffs, _ = _read(server, repo)
    assert _texts(diffs)[(repo.merged, "pkg/plain.py")][1] == "def f(a, b=2):\n    return a\n"
    # 28, 14 + 14, four of 7, eight of 3 or 4: all refused (1 + 2 + 4 + 8 queries); at 6 files or fewer a
    # refused query's files go to REST
    assert reader.routes["graphql (files)"] == 15 and reader.routes["contents"] == 28


def test_without_a_token_graphql_refuses_and_the_files_come_through_rest(repo):
    state = make_state([], REPO, git_dir=repo.path / ".git")  # REST answers without a token (GitHub: 60 an hour)
    state.graphql_needs_token = True
    with GitHubServer(state) as srv:
        clients = Clients(srv.url, None, retry=default_retry(backoff_factor=0.01, total=2), timeout=10,
                          seconds_between_requests=None)
        try:
            reader = BlobReader(clients, REPO, {repo.merged: repo.pr}, concurrency=2)
            diffs, missing = reader([repo.merged])
        finally:
            clients.close()
    assert missing == [] and _by_path(diffs, repo.merged)["pkg/plain.py"].after == "def f(a, b=2):\n    return a\n"
    assert reader.routes == {"graphql (merge commits)": 1, "git/commits": 1, "contents": 28}


def test_an_abbreviated_merge_commit_is_asked_through_rest_and_its_files_through_graphql(server, repo):
    short = repo.merged[:12]  # GraphQL's GitObjectID takes a whole sha; a source may know only a short one
    clients = Clients(server.url, TOKEN, retry=default_retry(backoff_factor=0.01, total=2), timeout=10,
                      seconds_between_requests=None)
    try:
        reader = BlobReader(clients, REPO, {short: repo.pr.model_copy(update={"merge_commit": short})})
        diffs, missing = reader([short])
    finally:
        clients.close()
    assert missing == [] and diffs[short].parent == repo.base
    assert _by_path(diffs, short)["pkg/plain.py"].after == "def f(a, b=2):\n    return a\n"
    assert reader.routes == {"git/commits": 1, "graphql (files)": 1}
