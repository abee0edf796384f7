"""Each fact's reach read from a real repository's tree at the merge commit (tests/git_support.py): what a
package ``__init__`` re-exports, ``__all__``, user docs, entry points and runtime pins are public; the rest of
the code, contributor docs, tests and development requirements internal; only public facts break."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from prdigest.collect.facts import Surface, week_facts
from prdigest.collect.facts.reach import classify, pr_evidence
from prdigest.collect.git import open_clone
from prdigest.kernel.models import Change, FileChange, PullRequest
from tests.git_support import _patches, commit, git, write

BASE = {
    "lib/__init__.py": "from lib.api import Engine, start\n",
    "lib/api.py": """
        class Engine:
            def run(self, prompt):
                return prompt

            def warm(self):
                return None


        def start(port):
            return port
        """,
    "lib/worker.py": """
        __all__ = ["Pool"]


        class Pool:
            def submit(self, job):
                return job


        class Runner:
            def step(self, batch):
                return batch


        def helper_fn(x):
            return x


        class SubPool(Pool):
            def extra(self):
                return 1
        """,
    "lib/plugin.py": """
        from abc import ABC


        class Backend(ABC):
            def load(self, path):
                return path
        """,
    "lib/store.py": """
        from abc import ABC


        class Store(ABC):
            def save(self, key):
                return key
        """,
    "lib/rejection_sample.py": "def rejection_sample(x):\n    return x\n",
    ".agents/README.md": "# Agent notes\n\nCheck versions with `lib.runner.spec.init_spec`.\n",
    "lib/legacy.py": "def old():\n    return 1\n",
    "lib/inner.py": "def tool():\n    return 1\n",
    "lib/_private.py": "def secret():\n    return 1\n",
    "docs/usage.md": "# Usage\n\nCall `Runner.step` with a batch; the runner steps the model.\n\n"
                     "Fused kernels: `lib.ops.fused_add`. Build from `main`.\n\n"
                     "Subclass `Store` to keep results. The layout:\n\n```\nlib/\n└── rejection_sample.py\n```\n",
    "lib/runner/__init__.py": "from lib.runner.spec import init_spec\n",
    "lib/runner/spec.py": "def init_spec(cfg):\n    return cfg\n",
    "lib/ops/__init__.py": "from lib.ops.fused import fused_add\n",
    "lib/ops/fused.py": "def fused_add(a, b):\n    return a + b\n",
    ".agents/skills/notes/fetch.py": "def main(tag):\n    return tag\n",
    "csrc/scripts/package.py": "def main(argv):\n    return argv\n",
    "docs/developer_guide/internals.md": "`helper_fn` and `tool` are internals.\n",
    "setup.py": 'from setuptools import setup\nsetup(entry_points={"lib.plugins": ["x = lib.inner:tool"]})\n',
    "requirements.txt": "torch==2.5.0\n",
    "requirements-lint.txt": "ruff==0.4.0\n",
    "Dockerfile": "FROM quay.io/ascend/cann:8.5.0-910b\nARG CANN_VERSION=8.5.0\nARG PIP_INDEX=https://x\n",
}

CHANGES = {
    "lib/api.py": """
        class Engine:
            def generate(self, prompt):
                return prompt

            def warm(self):
                return None


        def start(port, host):
            return port
        """,
    "lib/worker.py": """
        __all__ = ["Pool"]


        class Pool:
            def put(self, job):
                return job


        class Runner:
            def advance(self, batch):
                return batch


        def helper(x):
            return x


        class SubPool(Pool):
            pass
        """,
    "lib/plugin.py": """
        from abc import ABC


        class Backend(ABC):
            def load(self, path, strict):
                return path
        """,
    "lib/legacy.py": None,
    "lib/store.py": """
        from abc import ABC


        class Store(ABC):
            def save(self, key, ttl):
                return key
        """,
    "lib/rejection_sample.py": "def rejection_sample(x, y):\n    return x\n",
    "lib/inner.py": "def tool(flag):\n    return 1\n",
    "lib/runner/spec.py": "def init_spec(cfg, device):\n    return cfg\n",
    "lib/ops/fused.py": "def fused_add(a, b, out):\n    return a + b\n",
    ".agents/skills/notes/fetch.py": "def main(tag, since):\n    return tag\n",
    "csrc/scripts/package.py": "def main(argv, out):\n    return argv\n",
    "lib/_private.py": "def secret(y):\n    return 1\n",
    "requirements.txt": "torch==2.6.0\n",
    "requirements-lint.txt": "ruff==0.5.0\n",
    "Dockerfile": "FROM quay.io/ascend/cann:9.1.0-910b\nARG CANN_VERSION=9.1.0\nARG PIP_INDEX=https://y\n",
}


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[int, list[Change]], PullRequest]:
    repo = tmp_path_factory.mktemp("reach") / "up"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, BASE)
    commit(repo, "Initial layout")
    write(repo, CHANGES)
    sha = commit(repo, "Rework the API (#7)")
    pr = PullRequest(number=7, url="https://github.com/o/r/pull/7", title="Rework the API", author="dev",
                     merged_at=datetime(2026, 11, 16, tzinfo=timezone.utc), merge_commit=sha,
                     files=_patches(repo, sha))
    state = tmp_path_factory.mktemp("state")
    facts = week_facts([pr], surface=Surface(), clone=open_clone(repo.as_uri(), state_dir=state))
    return facts.changes, pr


def _by(changes: list[Change], kind: str, symbol: str) -> Change:
    path, _, symbol = symbol.rpartition(":")  # ``path:symbol`` when two files change a name of that name
    return next(c for c in changes if c.kind == kind and c.symbol == symbol and (not path or c.path == path))


@pytest.mark.parametrize(("kind", "symbol", "reach", "how"), [
    ("renamed", "Engine.generate", "internal", "a method of `Engine` (re-exported by `lib/__init__.py`) that no doc names"),
    ("signature", "start", "public", "re-exported by `lib/__init__.py`"),
    ("renamed", "Pool.put", "public", "listed in `__all__` of `lib/worker.py`"),
    ("renamed", "Runner.advance", "public", "`Runner.step` is named in `docs/usage.md`"),
    ("removed", "SubPool.extra", "internal", "a method of `SubPool`, a subclass of `Pool`: callers may still reach the base's"),
    # An abstract base class is the contract of its subclasses: users' when the docs lead them to it.
    ("signature", "Store.save", "public",
     "an abstract base class of `lib/store.py` (named in `docs/usage.md`), meant to be subclassed"),
    ("signature", "Backend.load", "internal", "an abstract base class of `lib/plugin.py` that no package users reach "
     "exports and no doc or entry point names: subclassed inside the repository"),
    # A doc's file tree names the file `rejection_sample.py`, not the function `rejection_sample` in it.
    ("signature", "rejection_sample", "internal", "not exported, documented nor an entry point: used only inside the repository"),
    ("signature", "tool", "public", "an entry point in `setup.py`"),
    ("renamed", "helper", "internal", "not exported, documented nor an entry point: used only inside the repository"),
    ("signature", "secret", "internal", "a private module (`lib._private`)"),
    ("file-deleted", "lib/legacy.py", "internal", "a module no package `__init__`, doc or entry point names"),
    # A sub-package's re-export is public only where something users read leads to the package.
    ("signature", "fused_add", "public", "re-exported by `lib/ops/__init__.py`"),
    # ``.agents/README.md`` naming it is written for the maintainers' agents, not for users.
    ("signature", "init_spec", "internal", "not exported, documented nor an entry point: used only inside the repository"),
    ("signature", ".agents/skills/notes/fetch.py:main", "internal", "the repository's own tooling (`.agents/`)"),
    # The docs saying `main` (the branch) do not make a script's main() public: a plain word names anything.
    ("signature", "csrc/scripts/package.py:main", "internal",
     "not exported, documented nor an entry point: used only inside the repository"),
    ("dependency", "torch", "public", "a runtime requirement (`requirements.txt`)"),
    ("dependency", "ruff", "internal", "a development or CI requirement (`requirements-lint.txt`)"),
    ("dependency", "CANN_VERSION", "public", "a runtime requirement (`Dockerfile`)"),
    ("dependency", "quay.io/ascend/cann", "public", "a runtime requirement (`Dockerfile`)"),
])
def test_each_fact_says_its_reach_and_how_it_was_decided(
        week: tuple[dict[int, list[Change]], PullRequest], kind: str, symbol: str, reach: str, how: str) -> None:
    fact = _by(week[0][7], kind, symbol)
    assert (fact.reach, fact.reach_how) == (reach, how)


def test_only_public_facts_break(week: tuple[dict[int, list[Change]], PullRequest]) -> None:
    breaking = {(c.kind, c.symbol) for c in week[0][7] if c.breaks}
    # helper (a rename nothing outside the repo names), a method of an exported class no doc names, one a base may
    # still give, and the contributor-documented names do not break.
    assert breaking == {("signature", "start"), ("renamed", "Pool.put"), ("signature", "fused_add"),
                        ("renamed", "Runner.advance"), ("signature", "Store.save"), ("signature", "tool")}


def test_the_dockerfile_pins_name_their_versions(week: tuple[dict[int, list[Change]], PullRequest]) -> None:
    cann = _by(week[0][7], "dependency", "CANN_VERSION")
    image = _by(week[0][7], "dependency", "quay.io/ascend/cann")
    assert (cann.before, cann.after, image.before, image.after) == ("8.5.0", "9.1.0", "8.5.0-910b", "9.1.0-910b")
    assert not any(c.symbol == "PIP_INDEX" for c in week[0][7])  # a URL argument is no version


def test_a_removed_module_a_package_re_exports_breaks() -> None:
    deleted = Change(kind="file-deleted", symbol="lib/api.py", path="lib/api.py", before="lib/api.py",
                     language="text")
    pr = PullRequest(number=8, url="https://github.com/o/r/pull/8", title="t", author="a",
                     merged_at=datetime(2026, 11, 16, tzinfo=timezone.utc),
                     files=[FileChange(path="lib/__init__.py", status="modified", patch="-from lib.api import Engine\n")])
    [fact] = classify([deleted], Surface(), pr_evidence(pr))
    assert (fact.reach, fact.breaks) == ("public", True)
    assert fact.reach_how == "the module is re-exported by `lib/__init__.py`"


def test_without_a_clone_a_name_is_internal_only_when_the_patches_show_it() -> None:
    facts = [Change(kind="renamed", symbol="Runner.advance", path="lib/worker.py", before="Runner.step"),
             Change(kind="renamed", symbol="Runner._go", path="lib/worker.py", before="Runner._step", public=False),
             Change(kind="tests", symbol="test_x", path="tests/test_x.py")]
    pr = PullRequest(number=9, url="https://github.com/o/r/pull/9", title="t", author="a",
                     merged_at=datetime(2026, 11, 16, tzinfo=timezone.utc))
    public, private, test = classify(facts, Surface(), pr_evidence(pr))
    assert (public.reach, public.reach_how) == ("public", "from the patches alone (no clone): not shown to be internal")
    assert (private.reach, private.breaks) == ("internal", False)
    assert (test.reach, test.reach_how) == ("internal", "a test")


def test_the_patches_give_the_dockerfile_pin_that_changed(week: tuple[dict[int, list[Change]], PullRequest]) -> None:
    from prdigest.collect.facts import patch_facts
    facts = patch_facts(week[1], Surface())
    assert {(c.symbol, c.before, c.after) for c in facts if c.path == "Dockerfile"} == {
        ("CANN_VERSION", "8.5.0", "9.1.0"), ("quay.io/ascend/cann", "8.5.0-910b", "9.1.0-910b")}


def test_reach_survives_the_facts_cache(tmp_path: Path) -> None:
    fact = Change(kind="renamed", symbol="helper", path="lib/worker.py", reach="internal", reach_how="why")
    assert Change.model_validate(fact.model_dump(mode="json")) == fact


def test_a_module_an_init_imports_for_its_effects_is_not_re_exported() -> None:
    from prdigest.collect.facts.reach import _init_names
    names = _init_names("import lib.patch.patch_sched  # noqa: F401\nimport lib.x as x\nfrom lib.api import Engine\n")
    assert {"Engine", "x"} <= names and "patch_sched" not in names


def test_an_init_that_stops_importing_a_module_from_above_removes_nothing_users_import(tmp_path: Path) -> None:
    """``from plug import envs`` in ``plug/patch/__init__.py`` (an entry point) was the package's own use of a
    module above it: dropping it removes nothing (``plug.envs`` is still there); a name it offered from below does."""
    repo = tmp_path / "up"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, {
        "setup.py": 'from setuptools import setup\nsetup(entry_points={"x.plugins": ["p = plug.patch:register"]})\n',
        "plug/__init__.py": "",
        "plug/envs.py": "BALANCE = False\n",
        "plug/patch/sched.py": "class Sched:\n    pass\n",
        "plug/patch/__init__.py": "from plug import envs\nfrom plug.patch.sched import Sched\n\n\n"
                                  "def register():\n    return envs.BALANCE\n"})
    commit(repo, "Initial layout")
    write(repo, {"plug/patch/__init__.py": "def register():\n    return True\n"})
    sha = commit(repo, "Drop the balance patch (#9)")
    pr = PullRequest(number=9, url="https://github.com/o/r/pull/9", title="Drop the balance patch", author="dev",
                     merged_at=datetime(2026, 11, 16, tzinfo=timezone.utc), merge_commit=sha,
                     files=_patches(repo, sha))
    facts = week_facts([pr], surface=Surface(), clone=open_clone(repo.as_uri(), state_dir=tmp_path / "state"))
    envs, sched = _by(facts.changes[9], "removed", "envs"), _by(facts.changes[9], "removed", "Sched")
    assert (envs.reach, envs.breaks) == ("internal", False), envs.reach_how
    assert "from a package above it" in envs.reach_how
    assert sched.reach == "public", sched.reach_how
