"""A repo's vocabulary: its own names, labels and order, from the drafter to the emails and Slack.

The fixture repo ``acme-labs/quill`` (tests/fixtures/quill) shares no subsystem name with vLLM.
"""

from __future__ import annotations

import json
from email import message_from_bytes, policy
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prdigest.classify.subsystems import FolderClassifier, classifier_for
from prdigest.collect.sources import JsonlSource
from prdigest.draft.offline import OfflineDrafter
from prdigest.kernel.errors import ConfigError
from prdigest.kernel.models import PullRequest
from prdigest.kernel.vocabulary import Vocabulary, is_name, name_problem
from prdigest.readers.file import load_readers

QUILL = Path(__file__).parent / "fixtures" / "quill"
REPO = "acme-labs/quill"


def _app():
    from flows.cli import app

    return app


@pytest.fixture(scope="module")
def quill():
    return classifier_for(REPO, QUILL / "rules.yaml")


@pytest.fixture(scope="module")
def prs() -> dict[int, PullRequest]:
    return {pr.number: pr for pr in JsonlSource(QUILL / "prs.jsonl").collect(None)}


@pytest.mark.parametrize(
    ("name", "valid"),
    [("parser", True), ("web-ui", True), ("a1", True), ("9lives", True), ("", False), ("Parser", False),
     ("-x", False), ("web_ui", False), ("../pwned", False), ("a b", False), ("docs\n", False), ("ü", False)],
)
def test_name_pattern(name: str, valid: bool) -> None:
    assert is_name(name) is valid
    assert (name_problem(name) is None) is valid


def test_quill_rules_declare_names_labels_order_and_fallback(quill) -> None:
    vocab = quill.vocabulary
    assert vocab.names == ("parser", "runtime", "web-ui", "docs-site", "misc")
    assert quill.known_subsystems == set(vocab.names)
    assert vocab.fallback.name == "misc" and vocab.shows == "labels"
    assert [vocab.label(n, "zh-CN") for n in vocab.names] == ["解析器", "运行时", "网页编辑器", "文档站点", "杂项"]
    assert vocab.shown(["web-ui", "parser"], "en") == ["Web editor", "Parser"]
    assert sorted(["misc", "web-ui", "parser"], key=vocab.sort_key) == ["parser", "web-ui", "misc"]


def test_quill_prs_are_classified_with_quills_names(quill, prs) -> None:
    assert quill.classify(prs[106]) == ["parser", "runtime"]
    assert quill.classify(prs[108]) == ["web-ui"]
    assert quill.classify(prs[107]) == ["misc"]          # README only: nothing matches
    assert quill.classify(prs[105]) == ["misc"]          # "[Chore]"
    assert all(set(quill.classify(pr)) <= quill.known_subsystems for pr in prs.values())


@pytest.mark.parametrize(
    ("number", "language", "headline_starts", "audience"),
    [(101, "zh-CN", "解析器：", "解析器维护者"), (102, "en", "Runtime: ", "runtime developers"),
     (108, "en", "Web editor: ", "front-end engineers"), (106, "en", "Unified", "parser maintainers, runtime developers")],
)
def test_drafter_speaks_the_repos_vocabulary(quill, prs, number, language, headline_starts, audience) -> None:
    pr = prs[number]
    entry = OfflineDrafter(quill.vocabulary).draft(pr, quill.classify(pr), language)
    assert entry.headline.startswith(headline_starts)
    assert entry.audience == audience


def test_core_areas_come_from_the_rules_file(quill, prs) -> None:
    pr = prs[106]  # touches both core areas of quill: parser and runtime
    with_rules = OfflineDrafter(quill.vocabulary).draft(pr, quill.classify(pr), "en")
    assert "touches core areas (Parser, Runtime)" in with_rules.rationale
    assert with_rules.verdict.value == "deep-read"


def test_without_a_vocabulary_the_drafter_names_no_repos_areas(prs) -> None:
    """Repo-independent signals only: no vLLM area is ever inferred for another repo."""
    vllm_labels = {s.label("en") for s in classifier_for("vllm-project/vllm").vocabulary.subsystems}
    drafter = OfflineDrafter()
    for pr in prs.values():
        entry = drafter.draft(pr, FolderClassifier().classify(pr), "en")
        assert not any(entry.headline.startswith(f"{label}: ") for label in vllm_labels), entry.headline
        assert entry.audience == "maintainers of the code"
    # A vLLM-looking PR gets no vLLM area either when the repo has no rules.
    kernel = prs[101].model_copy(update={"title": "[Kernel] Faster MoE kernels", "files": []})
    assert drafter.draft(kernel, ["other"], "en").headline.startswith("Faster")


def test_open_vocabulary_knows_no_names_ahead_and_shows_them_as_they_are() -> None:
    vocab = Vocabulary.open()
    assert vocab.known == frozenset() and vocab.is_open
    assert vocab.shown(["src", "other"], "zh-CN") == ["src", "other"]
    assert vocab.label("src", "en") == "src" and vocab.label("other", "zh-CN") == "其他"


# --- readers are validated against the rules of the repo they read ----------------------------------

def test_quill_readers_file_is_valid_for_quill_and_not_for_vllm(quill) -> None:
    assert [r.id for r in load_readers(QUILL / "readers.yaml", quill.known_subsystems).readers] == [
        "parser-team", "front-end", "everyone"]
    with pytest.raises(ConfigError) as info:
        load_readers(QUILL / "readers.yaml", classifier_for("vllm-project/vllm").known_subsystems)
    message = str(info.value)
    assert message.startswith(f"{QUILL / 'readers.yaml'}:6: readers[0] ('parser-team') subsystems")
    assert "unknown subsystem(s) parser; known: attention" in message


def test_vllm_names_are_refused_for_quill(tmp_path: Path, quill) -> None:
    path = tmp_path / "readers.yaml"
    path.write_text("readers:\n  - id: k\n    name: K\n    email: k@example.com\n"
                    "    subsystems: [parser]\n    exclude: [docs-site, kernels]\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"readers.yaml:6: readers\[0\] \('k'\) exclude: unknown subsystem\(s\) "
                                          r"kernels; known: docs-site, misc, parser, runtime, web-ui"):
        load_readers(path, quill.known_subsystems)


@pytest.mark.parametrize("bad", ["../../../pwned", "Parser", "web ui", "-x", ""])
def test_reader_names_must_have_the_form_of_a_name_even_without_rules(tmp_path: Path, bad: str) -> None:
    path = tmp_path / "readers.yaml"
    path.write_text("readers:\n  - id: k\n    name: K\n    email: k@example.com\n"
                    f"    subsystems: [src, {json.dumps(bad)}]\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_readers(path, FolderClassifier().known_subsystems)  # empty: folder names are not known ahead
    assert str(info.value).startswith(f"{path}:5: readers field 'readers.0.subsystems.1'")
    assert "is not a subsystem name" in str(info.value)


# --- end to end: the CLI, the flow, the emails and Slack ---------------------------------------------

LABELS = {"zh-CN": ("解析器", "运行时", "网页编辑器", "文档站点"), "en": ("Parser", "Runtime", "Web editor", "Docs site")}


@pytest.mark.prefect
@pytest.mark.slow
@pytest.mark.parametrize("language", ["zh-CN", "en"])
def test_a_repo_with_its_own_vocabulary_runs_end_to_end(prefect_api, tmp_path: Path, language: str) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(_app(), [
        "run", "--source", f"jsonl:{QUILL / 'prs.jsonl'}", "--rules", str(QUILL / "rules.yaml"),
        "--readers", str(QUILL / "readers.yaml"), "--out", str(out), "--language", language,
        "--state", str(tmp_path / "state.sqlite")])
    assert result.exit_code == 0, result.output

    digest = json.loads((out / "digest.json").read_text(encoding="utf-8"))
    assert digest["repo"] == REPO and len(digest["entries"]) == 10
    subsystems = {e["number"]: e["subsystems"] for e in digest["entries"]}
    assert subsystems[106] == ["parser", "runtime"] and subsystems[107] == ["misc"]  # names in digest.json

    parser_, runtime, editor, site = LABELS[language]
    emails = {p.stem: p.read_text(encoding="utf-8") for p in (out / "email").glob("*.html")}
    assert set(emails) == {"all", "parser", "docs-site+web-ui_no-misc"}
    assert f"{parser_} · {runtime}" in emails["all"]            # PR 106's eyebrow, in quill's labels
    assert editor in emails["docs-site+web-ui_no-misc"] and site in emails["docs-site+web-ui_no-misc"]
    assert "web-ui" not in emails["all"] and ">misc<" not in emails["all"]
    follow = f"订阅：{parser_}" if language == "zh-CN" else f"Following: {parser_}"
    assert follow in emails["parser"] and follow in (out / "email" / "parser.txt").read_text(encoding="utf-8")

    slack = json.dumps(json.loads((out / "slack" / "all.json").read_text(encoding="utf-8")), ensure_ascii=False)
    assert f"{parser_}, {runtime}" in slack and "web-ui" not in slack
    assert follow in json.dumps(json.loads((out / "slack" / "parser.json").read_text(encoding="utf-8")),
                                ensure_ascii=False)

    outbox = out / "outbox"
    assert {p.name for p in outbox.iterdir()} >= {"parser-team.eml", "parser-team.slack.json", "front-end.eml",
                                                   "everyone.eml", "everyone.slack.json"}
    msg = message_from_bytes((outbox / "parser-team.eml").read_bytes(), policy=policy.default)
    assert REPO in msg["Subject"]
