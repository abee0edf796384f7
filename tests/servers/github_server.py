"""A local GitHub REST server for tests and benchmarks, built from PRs in the source format (docs/contracts.md).

It speaks the JSON shapes PyGithub reads (absolute ``url`` fields, ``Link`` pagination) for the endpoints the
collector and the naive loop use: ``/search/issues`` (1,000-result cap), ``/repos/{o}/{r}``,
``/repos/{o}/{r}/pulls`` (list), ``/pulls/{n}``, ``/pulls/{n}/files`` (3,000-file cap), ``/pulls/{n}/comments``,
``/pulls/{n}/reviews``, ``/issues/{n}/comments``, ``/issues/{n}`` (the issues PRs link: ``linked_issues``), and the default branch's files through ``/git/trees/{ref}``
(``recursive=1``) and ``/contents/{path}`` (base64); the repo-wide listings of every PR's review comments and
every conversation comment (``/pulls/comments``, ``/issues/comments``, with ``since``, ``sort``, ``direction``),
and ``POST /graphql`` (``/api/graphql`` under ``/api/v3``) for the two query shapes the collector sends: a
repository's ``pullRequest(number:)`` reviews and ``issueOrPullRequest(number:)``, by alias, as GitHub answers
them (a number that is nothing: ``null`` and a ``NOT_FOUND`` error beside the data); and its
``object(oid: $v)`` commits and ``object(expression: $v)`` blobs (``<sha>:<path>``) of a served git repository
(``git_dir``: also ``/git/commits/{sha}`` and ``/contents/{path}?ref=<sha>``), a path the commit lacks ``null``.
It adds ETag/304, rate-limit headers, a primary limit that
resets, and fault injection by rate (502, 403 secondary limit, 429), optionally under ``/api/v3``.

Run standalone (for benchmarks): ``python -m tests.servers.github_server --synthetic 1000 --port 8765``;
``GET /_test/stats`` returns the request counters as JSON and ``POST /_test/reset`` clears them.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import re
import socket
import threading
import time
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from tests.servers.github_data import (  # noqa: F401  (re-exported: tests import everything from here)
    Faults,
    GitHubState,
    PrimaryLimit,
    ServedPR,
    decoys,
    iso,
    load_jsonl,
    make_state,
    parse_time,
    patch_text,
    search_bound,
    synthetic_week,
    user_json,
)
from tests.servers.github_objects import objects_answer

SEARCH_CAP = 1000
FILES_CAP = 3000
SECONDARY_MESSAGE = ("You have exceeded a secondary rate limit. Please wait a few minutes before you try again. "
                     "If you reach out to GitHub Support for help, please include the request ID.")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "GitHubServer"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in separate writes: without NODELAY, Nagle + delayed ACK add ~40 ms a request.
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    # ---- plumbing ---------------------------------------------------------------------------------
    @property
    def st(self) -> GitHubState:
        return self.server.state

    def _base(self) -> str:
        return f"http://{self.headers.get('Host')}{self.st.prefix}"

    def _send(self, status: int, body: Any, headers: dict[str, str] | None = None, *, raw: bytes | None = None,
              kind: str = "other") -> None:
        payload = raw if raw is not None else (b"" if body is None else json.dumps(body).encode())
        extra = dict(headers or {})
        if status == 200 and raw is None and body is not None:
            etag = 'W/"' + hashlib.sha1(payload).hexdigest() + '"'
            extra["ETag"] = etag
            if etag in (self.headers.get("If-None-Match") or ""):
                status, payload = 304, b""
        self._account(status, kind, extra)
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(payload)))
        for k, v in extra.items():
            self.send_header(k, v)
        self.end_headers()
        if payload:
            self.wfile.write(payload)

    def _account(self, status: int, kind: str, headers: dict[str, str]) -> None:
        st = self.st
        with st.lock:
            st.log.append((self.path, status))
            st.kinds[kind] += 1
            st.statuses[status] += 1
            now = time.time()
            limit = st.primary.limit if st.primary else 5000
            if st.primary and now >= st._primary_reset:
                st._primary_used, st._primary_reset = 0, now + st.primary.reset_in
            reset = st._primary_reset or now + 3600
            if status not in (304,) and status < 400 and st.primary:
                st._primary_used += 1
            used = st._primary_used
        headers.setdefault("X-RateLimit-Limit", str(limit))
        headers.setdefault("X-RateLimit-Remaining", str(max(limit - used, 0)))
        headers.setdefault("X-RateLimit-Reset", str(int(reset) + (0 if reset == int(reset) else 1)))
        headers.setdefault("X-RateLimit-Used", str(used))
        headers.setdefault("X-RateLimit-Resource", "search" if kind == "search" else "core")

    def _error(self, status: int, message: str, kind: str = "error", headers: dict[str, str] | None = None) -> None:
        self._send(status, {"message": message, "documentation_url": "https://docs.github.com/rest"}, headers,
                   kind=kind)

    def _paginate(self, items: list[Any], path: str, query: dict[str, str], kind: str,
                  wrap: Any = None) -> None:
        per_page = max(1, min(int(query.get("per_page", 30)), 100))
        page = max(1, int(query.get("page", 1)))
        last = max(1, -(-len(items) // per_page))
        chunk = items[(page - 1) * per_page: page * per_page]
        links = []

        def url(p: int) -> str:
            return f"{self._base()}{path}?{urlencode({**query, 'page': p, 'per_page': per_page})}"

        if page < last:
            links += [f'<{url(page + 1)}>; rel="next"', f'<{url(last)}>; rel="last"']
        if page > 1:
            links += [f'<{url(page - 1)}>; rel="prev"', f'<{url(1)}>; rel="first"']
        headers = {"Link": ", ".join(links)} if links else {}
        self._send(200, wrap(chunk) if wrap else chunk, headers, kind=kind)

    # ---- dispatch ---------------------------------------------------------------------------------
    def do_POST(self) -> None:
        if self._graphql_path():
            return self._graphql()
        if self.path.startswith("/_test/reset"):
            self.st.reset_counters()
            body = b"{}"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self._error(404, "Not Found")

    def do_GET(self) -> None:
        if self.path.startswith("/_test/stats"):
            body = json.dumps(self.st.stats()).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        st = self.st
        split = urlsplit(self.path)
        path = split.path
        query = {k: v[0] for k, v in parse_qs(split.query).items()}
        if st.prefix:
            if not path.startswith(st.prefix + "/"):
                return self._error(404, "Not Found")
            path = path[len(st.prefix):]
        if st.token is not None:
            auth = self.headers.get("Authorization") or ""
            if auth.split(" ", 1)[-1] != st.token:
                return self._error(401, "Bad credentials", kind="auth")
        if st.latency:
            time.sleep(st.latency)
        if self._fault():
            return
        if self._primary_exhausted():
            return
        self._route(path, query)

    def _fault(self) -> bool:
        st, f = self.st, self.st.faults
        with st.lock:
            st.api_requests += 1
            outage = f.outage_after is not None and st.api_requests > f.outage_after
            roll = st.rng.random()
        if outage or roll < f.rate_502:
            self._send(502, None, raw=b"<html><body><h1>502 Bad Gateway</h1></body></html>", kind="fault")
            return True
        roll -= f.rate_502
        if roll < f.rate_secondary:
            # GitHub sends Retry-After on some secondary-limit answers and not on others.
            headers = {"Retry-After": "0"} if st.rng.random() < 0.5 else {}
            self._error(403, SECONDARY_MESSAGE, kind="fault", headers=headers)
            return True
        roll -= f.rate_secondary
        if roll < f.rate_429:
            self._error(429, "Too many requests", kind="fault", headers={"Retry-After": "0"})
            return True
        return False

    def _primary_exhausted(self) -> bool:
        st = self.st
        if not st.primary:
            return False
        with st.lock:
            now = time.time()
            exhausted = now < st._primary_reset and st._primary_used >= st.primary.limit
        if exhausted:
            self._error(403, "API rate limit exceeded for user ID 1. (But here's the good news: Authenticated "
                        "requests get a higher rate limit.)", kind="primary",
                        headers={"X-RateLimit-Remaining": "0"})
        return exhausted

    def _route(self, path: str, query: dict[str, str]) -> None:
        st = self.st
        if path == "/search/issues":
            return self._search(query)
        if path == "/rate_limit":
            return self._send(200, {"resources": {}, "rate": {}}, kind="rate_limit")
        m = re.fullmatch(r"/repos/([^/]+/[^/]+)(/.*)?", path)
        if not m or m.group(1).lower() != st.repo.lower():
            return self._error(404, "Not Found", kind="not_found")
        rest = m.group(2) or ""
        if rest == "":
            return self._send(200, self._repo_json(), kind="repo")
        if rest == "/pulls":
            return self._pull_list(path, query)
        if rest in ("/pulls/comments", "/issues/comments"):
            return self._repo_comments(path, query, inline=rest == "/pulls/comments")
        if rest.startswith("/git/trees/"):
            return self._tree(rest.removeprefix("/git/trees/"), query)
        if rest.startswith("/contents/"):
            return self._contents(rest.removeprefix("/contents/"), query)
        if rest.startswith("/git/commits/"):
            return self._git_commit(rest.removeprefix("/git/commits/"))
        m = re.fullmatch(r"/(pulls|issues)/(\d+)(/\w+)?", rest)
        if m and m.group(1) == "issues" and not m.group(3) and int(m.group(2)) in st.issues:
            return self._send(200, self._issue_json(int(m.group(2))), kind="issue")
        pr = st.prs.get(int(m.group(2))) if m else None
        if not m or pr is None:
            return self._error(404, "Not Found", kind="not_found")
        what, sub = m.group(1), m.group(3) or ""
        if what == "pulls" and sub == "":
            return self._send(200, self._pull_json(pr, full=True), kind="pull")
        if what == "issues" and sub == "":  # a PR is an issue too: GitHub answers with its pull_request link
            return self._send(200, self._search_item(pr), kind="issue")
        if what == "pulls" and sub == "/files":
            files = [self._file_json(f) for f in pr.files[:FILES_CAP]]
            return self._paginate(files, path, query, "files")
        if what == "pulls" and sub == "/comments":
            return self._paginate(self._comments(pr, pr.inline_comments, inline=True), path, query,
                                  "review_comments")
        if what == "pulls" and sub == "/reviews":
            return self._paginate(self._reviews(pr), path, query, "reviews")
        if what == "issues" and sub == "/comments":
            return self._paginate(self._comments(pr, pr.issue_comments, inline=False), path, query,
                                  "issue_comments")
        return self._error(404, "Not Found", kind="not_found")

    # ---- the default branch's files ---------------------------------------------------------------
    def _tree(self, ref: str, query: dict[str, str]) -> None:
        if ref != "main":
            return self._error(404, "Not Found", kind="not_found")
        base = f"{self._base()}/repos/{self.st.repo}"
        entries: dict[str, dict[str, Any]] = {}
        for path, content in sorted(self.st.files.items()):
            parts = path.split("/")
            for depth in range(1, len(parts)):  # the folders, as git lists them
                folder = "/".join(parts[:depth])
                entries.setdefault(folder, {"path": folder, "mode": "040000", "type": "tree",
                                            "sha": hashlib.sha1(folder.encode("utf-8", "surrogatepass")).hexdigest(),
                                            "url": f"{base}/git/trees/{folder}"})
            sha = hashlib.sha1(content).hexdigest()
            entries[path] = {"path": path, "mode": "100644", "type": "blob", "sha": sha, "size": len(content),
                             "url": f"{base}/git/blobs/{sha}"}
        if query.get("recursive") not in ("1", "true"):
            entries = {k: v for k, v in entries.items() if "/" not in k}
        self._send(200, {"sha": "0" * 40, "url": f"{base}/git/trees/main", "tree": list(entries.values()),
                         "truncated": False}, kind="tree")

    def _git_commit(self, sha: str) -> None:
        """``GET /repos/{repo}/git/commits/{sha}``: the commit with its parents, from the served git repository."""
        found = self.st.git.commit(sha) if self.st.git is not None else None
        if not found:
            return self._error(404, "Not Found", kind="not_found")
        full, parents = found
        base = f"{self._base()}/repos/{self.st.repo}/git/commits"
        self._send(200, {"sha": full, "url": f"{base}/{full}", "message": "",
                         "parents": [{"sha": p, "url": f"{base}/{p}"} for p in parents]}, kind="git_commit")

    def _contents(self, path: str, query: dict[str, str]) -> None:
        from urllib.parse import unquote

        path = unquote(path)
        ref = query.get("ref", "main")
        content: bytes | None = None
        if ref != "main" and self.st.git is not None:  # a file at a commit, from the served git repository
            entry = self.st.git.entry(ref, path)
            content = self.st.git.blob(entry.oid) if entry is not None and entry.kind == "blob" else None
        elif ref == "main":
            content = self.st.files.get(path)
        if content is None:
            return self._error(404, "Not Found", kind="not_found")
        base = f"{self._base()}/repos/{self.st.repo}"
        self._send(200, {"type": "file", "encoding": "base64", "size": len(content), "name": path.rsplit("/", 1)[-1],
                         "path": path, "sha": hashlib.sha1(content).hexdigest(),
                         "content": base64.b64encode(content).decode(), "url": f"{base}/contents/{path}",
                         "html_url": f"https://github.com/{self.st.repo}/blob/{ref}/{path}"}, kind="contents")

    # ---- JSON shapes ------------------------------------------------------------------------------
    def _repo_json(self) -> dict[str, Any]:
        owner, name = self.st.repo.split("/")
        base = self._base()
        return {"id": 1, "name": name, "full_name": self.st.repo, "private": False,
                "owner": {"login": owner, "id": 2, "type": "Organization"},
                "url": f"{base}/repos/{self.st.repo}", "html_url": f"https://github.com/{self.st.repo}",
                "default_branch": "main"}

    def _pull_json(self, pr: ServedPR, *, full: bool) -> dict[str, Any]:
        base = f"{self._base()}/repos/{self.st.repo}"
        data = {
            "url": f"{base}/pulls/{pr.number}", "id": pr.number, "number": pr.number, "html_url": pr.html_url,
            "issue_url": f"{base}/issues/{pr.number}", "state": "closed" if pr.closed_at else "open",
            "title": pr.title, "body": pr.body, "user": user_json(pr.author),
            "labels": [{"name": n} for n in pr.labels], "created_at": iso(pr.created_at),
            "updated_at": iso(pr.updated_at), "closed_at": iso(pr.closed_at), "merged_at": iso(pr.merged_at),
            "review_comments_url": f"{base}/pulls/{pr.number}/comments",
            "comments_url": f"{base}/issues/{pr.number}/comments",
            "merge_commit_sha": pr.merge_commit,
        }
        if full:
            files = pr.files
            data.update({
                "merged": pr.merged_at is not None, "comments": len(pr.issue_comments),
                "review_comments": len(pr.inline_comments), "changed_files": len(files),
                "additions": sum(f.get("additions", 0) for f in files),
                "deletions": sum(f.get("deletions", 0) for f in files),
            })
        return data

    def _file_json(self, f: dict[str, Any]) -> dict[str, Any]:
        adds, dels = f.get("additions", 0), f.get("deletions", 0)
        data = {"sha": hashlib.sha1(f["path"].encode("utf-8", "surrogatepass")).hexdigest(), "filename": f["path"],
                "status": f.get("status", "modified"), "additions": adds, "deletions": dels,
                "changes": adds + dels, "patch": f.get("patch", patch_text(adds, dels))}
        if f.get("previous_path"):
            data["previous_filename"] = f["previous_path"]
        return data

    def _comments(self, pr: ServedPR, comments: list[dict[str, Any]], *, inline: bool) -> list[dict[str, Any]]:
        base = f"{self._base()}/repos/{self.st.repo}"
        out = []
        for i, c in enumerate(comments):
            cid = pr.number * 1000 + i + (500 if inline else 0)
            when = iso(pr.created_at + timedelta(minutes=i + 1))
            item = {"id": cid, "user": user_json(c.get("author")), "body": c.get("body", ""),
                    "created_at": when, "updated_at": when,
                    "url": f"{base}/{'pulls' if inline else 'issues'}/comments/{cid}"}
            if inline:
                item.update({"path": c.get("path"), "pull_request_review_id": pr.number * 10,
                             "diff_hunk": "@@ -1 +1 @@", "line": 1})
            out.append(item)
        return out

    def _issue_json(self, number: int) -> dict[str, Any]:
        issue = self.st.issues[number]
        base = f"{self._base()}/repos/{self.st.repo}"
        return {"url": f"{base}/issues/{number}", "repository_url": base, "id": 5_000_000 + number,
                "number": number, "title": issue.get("title", ""), "body": issue.get("body", ""),
                "state": issue.get("state", "open"), "user": user_json(issue.get("author", "reporter")),
                "labels": [], "comments": 0, "html_url": f"https://github.com/{self.st.repo}/issues/{number}",
                "created_at": "2026-11-01T00:00:00Z", "updated_at": "2026-11-02T00:00:00Z"}

    def _reviews(self, pr: ServedPR) -> list[dict[str, Any]]:
        return [{"id": pr.number * 10 + i, "user": user_json(r.get("author")), "body": r.get("body", ""),
                 "state": r.get("state", "COMMENTED"), "submitted_at": iso(pr.created_at + timedelta(hours=i + 1))}
                for i, r in enumerate(pr.reviews)]

    def _search_item(self, pr: ServedPR) -> dict[str, Any]:
        base = f"{self._base()}/repos/{self.st.repo}"
        return {
            "url": f"{base}/issues/{pr.number}", "repository_url": base, "html_url": pr.html_url,
            "id": pr.number, "number": pr.number, "title": pr.title, "body": pr.body, "user": user_json(pr.author),
            "labels": [{"name": n} for n in pr.labels], "state": "closed", "comments": len(pr.issue_comments),
            "created_at": iso(pr.created_at), "updated_at": iso(pr.updated_at), "closed_at": iso(pr.closed_at),
            "author_association": "CONTRIBUTOR", "score": 1.0,
            "pull_request": {"url": f"{base}/pulls/{pr.number}", "html_url": pr.html_url,
                             "diff_url": pr.html_url + ".diff", "patch_url": pr.html_url + ".patch",
                             "merged_at": iso(pr.merged_at)},
        }

    # ---- repo-wide comment listings and GraphQL ----------------------------------------------------
    def _repo_comments(self, path: str, query: dict[str, str], *, inline: bool) -> None:
        """Every PR's inline review comments (or conversation comments) updated since ``since``, as GitHub lists
        them repo-wide: each names its PR by URL."""
        base = f"{self._base()}/repos/{self.st.repo}"
        since = parse_time(query["since"]) if query.get("since") else None
        items: list[dict[str, Any]] = []
        for pr in self.st.prs.values():
            for item in self._comments(pr, pr.inline_comments if inline else pr.issue_comments, inline=inline):
                if since is not None and parse_time(item["updated_at"]) < since:
                    continue
                if inline:
                    item["pull_request_url"] = f"{base}/pulls/{pr.number}"
                else:
                    item["issue_url"] = f"{base}/issues/{pr.number}"
                items.append(item)
        key = "created_at" if query.get("sort", "created") == "created" else "updated_at"
        items.sort(key=lambda c: (c[key], c["id"]), reverse=query.get("direction", "asc") == "desc")
        self._paginate(items, path, query, "repo_review_comments" if inline else "repo_issue_comments")

    def _graphql_path(self) -> bool:
        path = urlsplit(self.path).path
        prefix = self.st.prefix.removesuffix("/v3") if self.st.prefix else ""
        return path == f"{prefix}/graphql"

    def _graphql(self) -> None:
        st = self.st
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        if st.token is not None and (self.headers.get("Authorization") or "").split(" ", 1)[-1] != st.token:
            return self._error(401, "Bad credentials", kind="auth")
        if not st.graphql:
            return self._error(404, "Not Found", kind="not_found")
        if st.graphql_needs_token and not self.headers.get("Authorization"):
            return self._error(401, "This endpoint requires you to be authenticated.", kind="auth")
        if st.latency:
            time.sleep(st.latency)
        if self._fault() or self._primary_exhausted():
            return
        query, variables = body.get("query") or "", body.get("variables") or {}
        with st.lock:
            st.graphql_queries.append(query)
        repo = f"{variables.get('owner')}/{variables.get('name')}"
        if repo.lower() != st.repo.lower():
            return self._send(200, {"data": {"repository": None}, "errors": [
                {"type": "NOT_FOUND", "path": ["repository"], "message": f"Could not resolve to a Repository "
                                                                         f"with the name '{repo}'."}]}, kind="graphql")
        data: dict[str, Any] = {}
        errors: list[dict[str, Any]] = []
        if "object(" in query:  # the collector's files and merge commits (tests/servers/github_objects.py)
            answer, kind = objects_answer(st, query, variables)
            return self._send(200, answer, kind=kind)
        for alias, field, number in re.findall(r"(\w+): (pullRequest|issueOrPullRequest)\(number: (\d+)\)", query):
            n = int(number)
            pr = st.prs.get(n)
            if field == "pullRequest" and pr is not None:
                reviews = [self._graphql_review(r) for r in self._reviews(pr)]
                # Inline comments belong to a review (pull_request_review_id: the PR's first review's id); a
                # PR with inline comments and no review has the review GitHub makes to hold them.
                if pr.inline_comments and not reviews:
                    reviews = [{"author": None, "state": "COMMENTED", "body": "",
                                "submittedAt": iso(pr.created_at), "comments": {"totalCount": 0}}]
                if reviews:
                    reviews[0]["comments"]["totalCount"] = len(pr.inline_comments)
                data[alias] = {"number": n, "comments": {"totalCount": len(pr.issue_comments)},
                               "reviews": {"nodes": reviews[:100], "pageInfo": {
                                   "hasNextPage": len(reviews) > 100, "endCursor": None}}}
            elif field == "issueOrPullRequest" and pr is not None:
                data[alias] = {"__typename": "PullRequest", "number": n}
            elif field == "issueOrPullRequest" and n in st.issues:
                issue = st.issues[n]
                data[alias] = {"__typename": "Issue", "number": n, "title": issue.get("title", ""),
                               "body": issue.get("body", ""), "state": issue.get("state", "open").upper()}
            else:
                data[alias] = None
                errors.append({"type": "NOT_FOUND", "path": ["repository", alias],
                               "message": f"Could not resolve to an issue or pull request with the number of {n}."})
        answer: dict[str, Any] = {"data": {"repository": data}}
        if errors:
            answer["errors"] = errors
        self._send(200, answer, kind="graphql")

    @staticmethod
    def _graphql_review(review: dict[str, Any]) -> dict[str, Any]:
        user = review.get("user")
        author = None
        if user:  # GraphQL names an app by its slug, typed Bot, where REST says "name[bot]"
            login = user["login"]
            bot = login.endswith("[bot]")
            author = {"__typename": "Bot" if bot else "User", "login": login.removesuffix("[bot]")}
        return {"author": author, "state": review["state"], "body": review["body"],
                "submittedAt": review["submitted_at"], "comments": {"totalCount": 0}}

    # ---- search and list --------------------------------------------------------------------------
    def _search(self, query: dict[str, str]) -> None:
        terms = query.get("q", "").split()
        lo, hi = datetime.min.replace(tzinfo=timezone.utc), datetime.max.replace(tzinfo=timezone.utc)
        repo_ok = True
        for term in terms:
            if term.startswith("repo:"):
                repo_ok = term[5:].lower() == self.st.repo.lower()
            elif term.startswith("merged:"):
                a, _, b = term[7:].partition("..")
                if a and a != "*":
                    lo = search_bound(a, upper=False)
                if b and b != "*":
                    hi = search_bound(b, upper=True)
            elif term not in ("is:pr", "is:merged", "type:pr"):
                return self._error(422, f"unsupported qualifier in this stub: {term}", kind="search")
        if not repo_ok:
            return self._error(422, "Validation Failed: The listed users and repositories cannot be searched "
                                    "either because the resources do not exist or you do not have permission "
                                    "to view them.", kind="search")
        hits = [pr for pr in self.st.prs.values() if pr.merged_at is not None and lo <= pr.merged_at <= hi]
        if query.get("sort") in ("updated", "created"):
            attr = "updated_at" if query["sort"] == "updated" else "created_at"
            hits.sort(key=lambda p: (getattr(p, attr), p.number), reverse=query.get("order", "desc") == "desc")
        else:
            hits.sort(key=lambda p: (p.merged_at, p.number), reverse=True)
        total = len(hits)
        per_page = max(1, min(int(query.get("per_page", 30)), 100))
        page = max(1, int(query.get("page", 1)))
        if (page - 1) * per_page >= SEARCH_CAP and total > 0:
            return self._error(422, "Only the first 1000 search results are available", kind="search")
        items = [self._search_item(pr) for pr in hits[:SEARCH_CAP]]
        self._paginate(items, "/search/issues", query, "search",
                       wrap=lambda chunk: {"total_count": total, "incomplete_results": False, "items": chunk})

    def _pull_list(self, path: str, query: dict[str, str]) -> None:
        state = query.get("state", "open")
        prs = [p for p in self.st.prs.values()
               if state == "all" or (state == "closed") == (p.closed_at is not None)]
        key = (lambda p: p.updated_at) if query.get("sort") == "updated" else (lambda p: p.created_at)
        prs.sort(key=lambda p: (key(p), p.number), reverse=query.get("direction", "desc") == "desc")
        self._paginate([self._pull_json(p, full=False) for p in prs], path, query, "pull_list")


class GitHubServer(ThreadingHTTPServer):
    """The HTTP server, bound to 127.0.0.1 on a free port; ``state`` holds the data and the counters."""

    daemon_threads = True

    def __init__(self, state: GitHubState, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), Handler)
        self.state = state
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The base URL PyGithub should use (with the Enterprise prefix when one is set)."""
        return f"http://127.0.0.1:{self.server_address[1]}{self.state.prefix}"

    def start(self) -> "GitHubServer":
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="github-stub", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
        if self.state.git is not None:
            self.state.git.close()

    def __enter__(self) -> "GitHubServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main() -> None:
    """Serve a synthetic week (or a JSONL file) until interrupted."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jsonl", type=Path)
    ap.add_argument("--synthetic", type=int, default=0)
    ap.add_argument("--repo", default="acme/widgets")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--prefix", default="")
    ap.add_argument("--token")
    ap.add_argument("--latency", type=float, default=0.0, help="seconds added to every API request")
    ap.add_argument("--git-dir", type=Path, help="a git repository whose commits and files at a commit are served")
    ap.add_argument("--no-graphql", action="store_true", help="answer POST /graphql 404, as a GitHub without it")
    args = ap.parse_args()
    records = load_jsonl(args.jsonl) if args.jsonl else synthetic_week(args.synthetic, repo=args.repo)
    state = make_state(records, args.repo, prefix=args.prefix, token=args.token, latency=args.latency,
                       git_dir=args.git_dir)
    state.graphql = not args.no_graphql
    server = GitHubServer(state, args.port)
    print(server.url, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
