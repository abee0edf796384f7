"""Verdicts by what a PR's files are for, on a real repository's week (tests/git_support.py): a small guard in
shipped code is worth a skim, a docs touch-up, a translation, the repository's own CI and tooling, a removed
workaround and a hoist into a base class are skips, a release note is a skim, a patch release of the platform
is no deep read (prdigest/draft/scope.py, prdigest/draft/verdict.py)."""

from __future__ import annotations

import textwrap
from datetime import datetime, timezone

import pytest

from prdigest.collect.facts import Surface, week_facts
from prdigest.collect.git import open_clone
from prdigest.draft.offline import OfflineDrafter
from prdigest.kernel.models import DraftEntry, PullRequest, Verdict
from tests.git_support import _patches, commit, git, write

BODY = ("### What this PR does / why we need it?\nThe change below was found while running the nightly jobs on "
        "the new cards; the description says what moved and why, so that a reviewer can check it against the "
        "design. It was tested by hand on a single node and on two nodes, with the usual models and settings, "
        "and nothing else in the repository depends on the old behaviour as far as the search of the code shows.")
SCHEME = textwrap.dedent('''
    class {name}(Scheme):
        def get_weight(self, size):
            return {{"weight": size}}

        def get_scale(self, size):
            return {{"scale": size}}

        def apply(self, x):
            return x * {factor}
    ''')
BASE = {
    "pkg/__init__.py": "from pkg.platform import Platform\n",
    "pkg/platform.py": '''
        class Platform:
            def check_config(self, config):
                config.ready = True
                return config
        ''',
    "pkg/quant/__init__.py": "",
    "pkg/quant/base.py": "class Scheme:\n    pass\n",
    "pkg/quant/w8a8_static.py": "from pkg.quant.base import Scheme\n" + SCHEME.format(name="StaticMethod", factor=1),
    "pkg/quant/w8a8_dynamic.py": "from pkg.quant.base import Scheme\n" + SCHEME.format(name="DynamicMethod", factor=2),
    "pkg/patch/__init__.py": "",
    "pkg/patch/patch_bert.py": "".join(f"def shim_{i}(x):\n    return x + {i}\n\n\n" for i in range(12)),
    "docs/source/install.md": "# Install\n\n## Caption one\n\nRun `pip install pkg`.\n\nSee [the guide](a.md).\n",
    "docs/source/release_notes.md": "# Release notes\n",
    "docs/source/locale/zh_CN/LC_MESSAGES/install.po": 'msgid "Install"\nmsgstr ""\n',
    ".github/workflows/build.yaml": "jobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n      - run: make\n",
    "csrc/build.sh": "#!/bin/sh\nmake\n",
    "Dockerfile": "FROM base:1.0\nARG VLLM_TAG=v0.20.1\n",
    "docs/source/conf.py": "linkcheck_ignore = []\n",
    "docs/source/community/contributors.md": "# Maintainers\n\n- Ann\n",
    "docs/source/developer_guide/contribution.md": "# Contributing\n\nTitle prefixes: [Bugfix].\n",
    "AGENTS.md": "# Agents\n\nUse [Bugfix] in titles.\n",
    "docs/source/tutorials/serve.md": "# Serve\n",
}
#: number → (title, files written, the verdict wanted)
PRS: dict[int, tuple[str, dict[str, str | None], Verdict]] = {
    1: ("[BugFix] Fix server init error when max_num_seqs is not a multiple of tp", {"pkg/platform.py": '''
        class Platform:
            def check_config(self, config):
                config.ready = True
                if config.max_num_seqs % config.tp:
                    config.capture = config.tp * (config.max_num_seqs // config.tp)
                return config
        '''}, Verdict.SKIM),
    2: ("[Doc] Correct title and caption in the install guide", {
        "docs/source/install.md": "# Installation\n\n## Caption\n\nRun `pip install pkg`.\n\nSee [the guide](b.md).\n"},
        Verdict.SKIP),
    3: ("[Doc] Translated Doc files 2026-05-13", {
        "docs/source/locale/zh_CN/LC_MESSAGES/install.po": 'msgid "Install"\nmsgstr "安装"\n'}, Verdict.SKIP),
    4: ("[Doc][Release] v0.2.0 release note", {
        "docs/source/release_notes.md": "# Release notes\n\n## v0.2.0\n\n" + "".join(
            f"- Feature {i}: the engine now supports case {i}.\n" for i in range(12)),
        ".github/workflows/build.yaml": "on: workflow_dispatch\njobs:\n  build:\n    runs-on: ubuntu-latest\n"
                                        "    steps:\n      - run: make\n"}, Verdict.SKIM),
    5: ("[CI] Add a build cache for the image", {
        ".github/workflows/build.yaml": "jobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n"
                                        "      - uses: actions/cache@v4\n      - run: make\n",
        "csrc/build.sh": "#!/bin/sh\n" + "".join(f"echo step {i}\n" for i in range(30)) + "make\n"}, Verdict.SKIP),
    6: ("[Misc] Remove bert patch", {"pkg/patch/patch_bert.py": None}, Verdict.SKIP),
    7: ("[Refactor] W8A8 methods share a common base class", {
        "pkg/quant/w8a8_base.py": "from pkg.quant.base import Scheme\n" + SCHEME.format(name="W8A8Scheme", factor=1),
        "pkg/quant/w8a8_static.py": "from pkg.quant.w8a8_base import W8A8Scheme\n\n\nclass StaticMethod(W8A8Scheme):"
                                    "\n    pass\n",
        "pkg/quant/w8a8_dynamic.py": "from pkg.quant.w8a8_base import W8A8Scheme\n\n\nclass DynamicMethod(W8A8Scheme):"
                                     "\n    def apply(self, x):\n        return x * 2\n"}, Verdict.SKIP),
    8: ("[CI] Main2main: move to vLLM v0.20.2", {"Dockerfile": "FROM base:1.0\nARG VLLM_TAG=v0.20.2\n"}, Verdict.SKIM),
    # the docs' build set-up, who maintains the repository, what contributors and coding agents are told: own work
    9: ("[CI] Add doc linkcheck ignore rule", {"docs/source/conf.py": 'linkcheck_ignore = ["https://x.org"]\n'},
        Verdict.SKIP),
    10: ("[Community] Nominate a new maintainer", {
        "docs/source/community/contributors.md": "# Maintainers\n\n- Ann\n- Bo\n"}, Verdict.SKIP),
    11: ("[Doc] Align PR title prefix guidance", {
        "docs/source/developer_guide/contribution.md": "# Contributing\n\nTitle prefixes: [BugFix].\n",
        "AGENTS.md": "# Agents\n\nUse [BugFix] in titles.\n"}, Verdict.SKIP),
    # a CI action's version bumped: plumbing
    12: ("[CI] Bump actions/cache from 3 to 4", {
        ".github/workflows/build.yaml": "jobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n"
                                        "      - uses: actions/cache@v4\n      - run: make -j\n"}, Verdict.SKIP),
    # a tutorial users read stays worth a skim
    13: ("[Doc] Add a serving tutorial", {"docs/source/tutorials/serve.md": "# Serve\n\n" + "".join(
        f"Step {i}: run `pkg serve --port {8000 + i}` and check the logs.\n" for i in range(10))}, Verdict.SKIM),
    # a new page of substance for contributors or coding agents (a skill, an AGENTS.md written out) is worth a
    # skim, with or without its pre-commit hook beside it; a small edit of one (11) stays a skip
    14: ("[Doc][Skill] Add a model-adaptation skill for coding agents", {
        ".agents/skills/adapt-model/SKILL.md": "# Adapt a model\n\n" + "".join(
            f"{i}. Check that layer {i} loads its weights and compare its outputs with the reference.\n"
            for i in range(120))}, Verdict.SKIM),
    15: ("[Doc] Add development guidelines for coding agents", {
        "docs/source/developer_guide/agents.md": "# Guidelines\n\n" + "".join(
            f"- Rule {i}: run the unit tests of the module you change before opening a PR.\n" for i in range(110)),
        ".github/workflows/build.yaml": "jobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n"
                                        "      - run: make lint\n      - run: make\n"}, Verdict.SKIM),
}


@pytest.fixture(scope="module")
def drafts(tmp_path_factory: pytest.TempPathFactory) -> dict[int, DraftEntry]:
    repo = tmp_path_factory.mktemp("scope") / "up"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, BASE)
    commit(repo, "Initial layout")
    prs = []
    for number, (title, files, _) in PRS.items():
        write(repo, files)
        sha = commit(repo, f"{title} (#{number})")
        patches = _patches(repo, sha)
        prs.append(PullRequest(number=number, url=f"https://github.com/o/r/pull/{number}", title=title, author="dev",
                               body=BODY, merged_at=datetime(2026, 11, 16, tzinfo=timezone.utc), merge_commit=sha,
                               files=patches, additions=sum(f.additions for f in patches),
                               deletions=sum(f.deletions for f in patches)))
    facts = week_facts(prs, surface=Surface(), clone=open_clone(repo.as_uri(), state_dir=tmp_path_factory.mktemp("s")))
    drafter = OfflineDrafter()
    return {pr.number: drafter.draft(pr.model_copy(update={"changes": facts.changes.get(pr.number, [])}), [], "en")
            for pr in prs}


@pytest.mark.parametrize("number", sorted(PRS))
def test_each_kind_of_pr_gets_the_verdict_its_files_call_for(drafts: dict[int, DraftEntry], number: int) -> None:
    assert drafts[number].verdict is PRS[number][2], drafts[number].rationale


def test_the_rules_say_why(drafts: dict[int, DraftEntry]) -> None:
    assert "translation" in drafts[3].rationale
    assert "touch-up" in drafts[2].rationale
    assert "own tests, CI" in drafts[5].rationale
    assert "mechanical" in drafts[7].rationale


def test_a_patch_release_of_the_platform_still_asks_for_the_upgrade(drafts: dict[int, DraftEntry]) -> None:
    assert drafts[8].verdict is not Verdict.DEEP_READ
