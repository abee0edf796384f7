"""End to end on a repository nothing was tuned on: 300 PRs of `acme/riverdb` (tests/riverdb_week.py) through
the real `digest` command, offline, with no rules file of its own and three readers; then what each reader
gets, the relations read from prose, `digest status`, a second run, and the edition record."""

from __future__ import annotations

import email
import json
import os
import re
import subprocess
import sys
from email.message import Message
from html.parser import HTMLParser
from pathlib import Path

import pytest

from prdigest.state.record import resolve
from prdigest.state.store import open_store
from tests.riverdb_week import REPO, Planted, build_week, write_jsonl

pytestmark = pytest.mark.slow  # two runs of a 300-PR week and `digest rules init`: ~20 s on a loaded machine

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
FOLLOWED = {"replication", "wire"}
READERS = """\
readers:
  - id: cluster-team
    name: Cluster team
    email: cluster@example.com
    subsystems: [replication, wire]
    budget: 3
  - id: everyone
    name: Everyone
    email: everyone@example.com
  - id: docs-deep
    name: Docs, deep reads only
    email: docs@example.com
    subsystems: [docs]
    min_verdict: deep-read
"""


def _env(home: Path) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "DIGEST_", "COLUMNS"))}
    (home / "prefect-home").mkdir(exist_ok=True)
    return {**keep, "PREFECT_HOME": str(home / "prefect-home"), "DIGEST_STATE": str(home / "state.sqlite"),
            "COLUMNS": "240"}


def _digest(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([sys.executable, "-m", "flows.cli", *args], cwd=home, env=_env(home), text=True,
                            capture_output=True, timeout=600)
    assert "Traceback" not in result.stdout + result.stderr, result.stderr[-3000:]
    return result


class Week:
    """The week, its files and the outputs of two identical runs."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.prs, self.planted, self.issues = build_week()
        self.numbers = {pr["number"] for pr in self.prs}
        write_jsonl(self.prs, home / "week.jsonl")
        (home / "readers.yaml").write_text(READERS, encoding="utf-8")
        self.out = home / "out"
        self.first = self.run()
        self.outbox_before = {p.name: p.read_bytes() for p in (self.out / "outbox").iterdir()}
        self.digest = json.loads((self.out / "digest.json").read_text(encoding="utf-8"))
        self.second = self.run()

    def run(self) -> subprocess.CompletedProcess[str]:
        return _digest(self.home, "run", "--source", "jsonl:week.jsonl", "--repo", REPO,
                       "--readers", "readers.yaml", "--drafter", "offline", "--approve", "auto",
                       "--deliver", "outbox", "--out", "out", "--language", "en")

    @property
    def entries(self) -> dict[int, dict]:
        return {e["number"]: e for e in self.digest["entries"]}

    def variant_of(self, reader: str) -> dict:
        (found,) = [v for v in self.digest["variants"] if reader in v["readers"]]
        return found


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> Week:
    return Week(tmp_path_factory.mktemp("riverdb"))


class _Sections(HTMLParser):
    """The e-mail's visible text in order, each piece tagged with the nearest enclosing class we look for."""

    WATCH = ("lede", "rf", "e", "k m")

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str | None] = []
        self.pieces: list[tuple[str | None, str]] = []
        self.hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("br", "img", "meta", "link", "hr", "input"):
            return
        found = dict(attrs)
        style, cls = found.get("style") or "", found.get("class") or ""
        hide = tag in ("style", "title", "head") or "display:none" in style.replace(" ", "")
        self.hidden += hide
        self.stack.append(("#hide" if hide else "") or (cls if cls in self.WATCH else None))

    def handle_endtag(self, tag: str) -> None:
        if tag in ("br", "img", "meta", "link", "hr", "input") or not self.stack:
            return
        if self.stack.pop() == "#hide":
            self.hidden -= 1

    def handle_data(self, data: str) -> None:
        if self.hidden or not data.strip():
            return
        inner = next((c for c in reversed(self.stack) if c), None)
        self.pieces.append((inner, data.strip()))


def _sections(html: str) -> _Sections:
    parsed = _Sections()
    parsed.feed(html)
    return parsed


def _html_of(eml: Path) -> str:
    message: Message = email.message_from_bytes(eml.read_bytes())
    (html,) = [p for p in message.walk() if p.get_content_type() == "text/html"]
    return html.get_payload(decode=True).decode(html.get_content_charset() or "utf-8")


# --- the run -------------------------------------------------------------------------------------------------
def test_the_week_runs_offline_on_a_proposed_vocabulary(week: Week) -> None:
    assert week.first.returncode == 0, week.first.stdout[-3000:] + week.first.stderr[-3000:]
    assert len(week.digest["entries"]) == 300 and week.digest["drafter"] == "offline"
    shown = {s for e in week.digest["entries"] for s in e["subsystems"]}
    # The folders of the engine are its vocabulary, and almost nothing falls into the catch-all.
    assert {"storage", "query", "replication", "wire", "txn", "catalog", "docs"} <= shown
    assert sum(e["subsystems"][0] == "other" for e in week.digest["entries"]) <= 30
    # No rules file for this repo: the run proposes the vocabulary itself and says so.
    assert "propos" in (week.first.stdout + week.first.stderr).lower()


# --- each reader -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("where", ["outbox", "email"])
def test_the_two_subsystem_reader_starts_with_their_read_first_and_their_own_lede(week: Week, where: str) -> None:
    variant = week.variant_of("cluster-team")
    html = (_html_of(week.out / "outbox" / "cluster-team.eml") if where == "outbox"
            else (week.out / "email" / f"{variant['key']}.html").read_text(encoding="utf-8"))
    pieces = _sections(html).pieces
    kinds = [k for k, _ in pieces]
    assert "lede" in kinds and "e" in kinds, kinds
    lede = " ".join(t for k, t in pieces if k == "lede")
    read_first = [int(m) for k, t in pieces if k == "rf" for m in re.findall(r"^#(\d+)$", t)]
    # Read first opens the message: right after the lede, before any entry, at most the budget.
    first_entry = kinds.index("e")
    assert kinds.index("lede") < first_entry
    assert all(i < first_entry for i, k in enumerate(kinds) if k == "rf")
    assert 1 <= len(read_first) <= 3, read_first
    assert read_first == variant["read_first"]
    for number in read_first:
        assert set(week.entries[number]["subsystems"]) & FOLLOWED, (number, week.entries[number]["subsystems"])
    # The lede is theirs: it cites only entries that reach them, and their read-first leads it.
    theirs = set(variant["numbers"])
    assert all(set(week.entries[n]["subsystems"]) & FOLLOWED for n in theirs)
    cited = {int(n) for n in re.findall(r"#(\d+)", lede)}
    assert cited and cited <= theirs, (cited - theirs, lede)
    assert f"#{read_first[0]}" in lede
    assert str(len(theirs)) in lede.split()  # "76 PRs of this week's 300 reach you, …": their count


def test_the_reader_of_everything_gets_every_entry_and_the_idle_reader_nothing(week: Week) -> None:
    assert set(week.variant_of("everyone")["numbers"]) == set(week.entries)
    # The idle reader's filter really selects nothing (no docs PR is a deep read) and they get no message.
    assert not [n for n, e in week.entries.items() if "docs" in e["subsystems"] and e["verdict"] == "deep-read"]
    assert not [v for v in week.digest["variants"] if "docs-deep" in v["readers"]]
    assert sorted(week.outbox_before) == ["cluster-team.eml", "everyone.eml"]


# --- relations from prose ---------------------------------------------------------------------------------------
def _found(week: Week, planted: Planted) -> bool:
    return any(r["kind"] == planted.kind and r["number"] == planted.target
               for r in week.entries[planted.source]["relations"])


def test_prose_references_become_relations_and_none_is_invented(week: Week) -> None:
    assert len(week.planted) == 10
    missed = [p for p in week.planted if not _found(week, p)]
    assert len(missed) <= 2, missed
    related = [(n, r) for n, e in week.entries.items() for r in e["relations"]]
    assert related
    invented = [(n, r) for n, r in related if r["number"] not in week.numbers]
    assert not invented, invented  # issue numbers in prose (Closes #N, See #N) are not PRs
    assert not {r["number"] for _, r in related} & set(week.issues)
    # Every relation is one the prose planted, or its other side, or a story's neighbour the prose named.
    named = {(p.source, p.target) for p in week.planted} | {(p.target, p.source) for p in week.planted}
    reland = next(p for p in week.planted if p.kind == "relands")
    revert = next(p for p in week.planted if p.kind == "reverts" and p.target == reland.target)
    named |= {(reland.source, revert.source), (revert.source, reland.source)}  # "after it was reverted in #M"
    assert not [(n, r) for n, r in related if (n, r["number"]) not in named]


# --- status, the second run, the record -------------------------------------------------------------------------
def test_status_lists_each_reader_and_the_delivered_record(week: Week) -> None:
    shown = _digest(week.home, "status", week.digest["key"])
    assert shown.returncode == 0, shown.stdout + shown.stderr
    rows = [line for line in shown.stdout.splitlines() if "outbox-email" in line]
    for reader in ("cluster-team", "everyone"):
        assert any(reader in row and " sent " in row for row in rows), (reader, shown.stdout)
    assert not [row for row in rows if "docs-deep" in row]
    assert "edition record: delivered" in shown.stdout


def test_a_second_identical_run_sends_nothing(week: Week) -> None:
    assert week.second.returncode == 0, week.second.stdout + week.second.stderr
    assert "already delivered" in " ".join(week.second.stdout.split())
    assert {p.name: p.read_bytes() for p in (week.out / "outbox").iterdir()} == week.outbox_before
    shown = _digest(week.home, "status", week.digest["key"])
    attempts = [line.split("│") for line in shown.stdout.splitlines() if "outbox-email" in line]
    assert len(attempts) == 2 and all(cells[6].strip() == "1" for cells in attempts), shown.stdout


def test_digest_json_is_the_edition_record(week: Week) -> None:
    with open_store(week.home / "state.sqlite") as store:
        record = resolve(store, week.digest["key"])
    assert record is not None and record.status == "delivered"
    stored = record.edition.model_dump(mode="json")
    assert week.digest["entries"] == stored["entries"]
    assert {k: v for k, v in week.digest.items() if k not in ("name", "week", "key")} == stored
    assert json.loads((week.out / "digest.json").read_text(encoding="utf-8")) == week.digest  # the rerun kept it


# --- how it looks ------------------------------------------------------------------------------------------------
def test_screenshot_of_the_two_subsystem_readers_email(week: Week) -> None:
    from prdigest.publish.screenshot import chromium, screenshot

    if chromium() is None:
        pytest.skip("Chromium is not installed")
    html = week.out / "email" / f"{week.variant_of('cluster-team')['key']}.html"
    png = screenshot(html, week.home / "cluster-team-600.png", width=600, height=1800)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 40_000  # a blank page compresses to a few KB
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "riverdb-cluster-team-600.png").write_bytes(data)
