"""A small upstream (a package named ``vllm``) and a downstream built on it (``ds``), both real git repositories
made with git init/commit, and the upstream week's PR records: one merge commit per PR, each touching the
downstream in one way (or, for the negatives, in none)."""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from prdigest.collect.facts import Surface, commit_facts
from prdigest.collect.facts.hierarchy import GitTree
from prdigest.collect.git import UpstreamClone, read_commits
from prdigest.connect.impact.downstream import DownstreamSpec, load_index
from prdigest.connect.impact.match import UseTable, match_changes
from prdigest.kernel.models import Change, Impact
from prdigest.state.store import open_store
from tests.git_support import commit, git, write

UPSTREAM_BASE = {
    "vllm/__init__.py": '"""vllm."""\n',
    "vllm/envs.py": '''
        import os

        VLLM_USE_V1 = os.environ.get("VLLM_USE_V1", "1")
        ''',
    "vllm/utils.py": '''
        def cdiv(a, b=1):
            return -(a // -b)


        def _helper(x):
            return x
        ''',
    "vllm/model_executor/__init__.py": "",
    "vllm/model_executor/layers/__init__.py": "",
    "vllm/model_executor/layers/utils.py": '''
        def make_layer(n):
            return [n]
        ''',
    "vllm/model_executor/layers/fused_moe/__init__.py": '''
        from vllm.model_executor.layers.fused_moe.layer import FusedMoE, select_experts

        __all__ = ["FusedMoE", "select_experts"]
        ''',
    "vllm/model_executor/layers/fused_moe/layer.py": '''
        class FusedMoE:
            def __init__(self, num_experts, top_k=2):
                self.num_experts = num_experts
                self.top_k = top_k

            def forward(self, hidden_states, router_logits, dtype=None):
                return hidden_states


        def select_experts(logits, top_k):
            return sorted(logits)[:top_k]
        ''',
    "vllm/attention/__init__.py": "",
    "vllm/attention/backend.py": '''
        import abc


        class AttentionBackend(abc.ABC):
            @abc.abstractmethod
            def get_name(self):
                ...
        ''',
    "vllm/distributed/__init__.py": "",
    "vllm/distributed/parallel_state.py": '''
        def get_tp_group():
            return None


        def get_pp_group():
            return None
        ''',
    # the user docs lead to FusedMoE: public surface (a rename asks every reader, not only the plugin team)
    "docs/moe.md": "# MoE\n\nSubclass `FusedMoE` to add an expert kernel.\n",
}

#: The PRs of the week: number → (title, files the merge commit writes; None deletes).
UPSTREAM_PRS: dict[int, tuple[str, dict[str, str | None]]] = {
    101: ("Drop the dtype argument of FusedMoE.forward", {
        "vllm/model_executor/layers/fused_moe/layer.py": '''
            class FusedMoE:
                def __init__(self, num_experts, top_k=2):
                    self.num_experts = num_experts
                    self.top_k = top_k

                def forward(self, hidden_states, router_logits):
                    return hidden_states


            def select_experts(logits, top_k):
                return sorted(logits)[:top_k]
            ''',
    }),
    102: ("Rename FusedMoE to FusedMoEFactory", {
        "vllm/model_executor/layers/fused_moe/layer.py": '''
            class FusedMoEFactory:
                def __init__(self, num_experts, top_k=2):
                    self.num_experts = num_experts
                    self.top_k = top_k

                def forward(self, hidden_states, router_logits):
                    return hidden_states


            def select_experts(logits, top_k):
                return sorted(logits)[:top_k]
            ''',
        "vllm/model_executor/layers/fused_moe/__init__.py": '''
            from vllm.model_executor.layers.fused_moe.layer import FusedMoEFactory, select_experts

            __all__ = ["FusedMoEFactory", "select_experts"]
            ''',
    }),
    103: ("select_experts: stable order of ties", {
        "vllm/model_executor/layers/fused_moe/layer.py": '''
            class FusedMoEFactory:
                def __init__(self, num_experts, top_k=2):
                    self.num_experts = num_experts
                    self.top_k = top_k

                def forward(self, hidden_states, router_logits):
                    return hidden_states


            def select_experts(logits, top_k):
                ranked = sorted(enumerate(logits), key=lambda p: (p[1], p[0]))
                return [v for _, v in ranked][:top_k]
            ''',
    }),
    104: ("Attention backends name their builder", {
        "vllm/attention/backend.py": '''
            import abc


            class AttentionBackend(abc.ABC):
                @abc.abstractmethod
                def get_name(self):
                    ...

                @abc.abstractmethod
                def get_builder_cls(self):
                    ...
            ''',
    }),
    105: ("Remove get_tp_group", {
        "vllm/distributed/parallel_state.py": '''
            def get_pp_group():
                return None
            ''',
    }),
    106: ("cdiv rounds to 2 by default", {
        "vllm/utils.py": '''
            def cdiv(a, b=2):
                return -(a // -b)


            def _helper(x):
                return x
            ''',
    }),
    107: ("Docs: MoE layers", {"docs/moe.md": "# MoE\n\nFusedMoE is now FusedMoEFactory.\n"}),
    108: ("Remove the private helper and make_layer", {
        "vllm/utils.py": '''
            def cdiv(a, b=2):
                return -(a // -b)
            ''',
        "vllm/model_executor/layers/utils.py": '''
            def build_layer(n):
                return [n, n]
            ''',
    }),
}

DOWNSTREAM = {
    "ds/__init__.py": '"""The downstream plugin."""\n',
    "ds/compat.py": "from vllm.model_executor.layers.fused_moe import FusedMoE\n",
    "ds/ops/__init__.py": "",
    "ds/ops/fused_moe.py": '''
        """Our MoE: built on vllm.model_executor.layers.fused_moe (this docstring uses nothing)."""
        from vllm.model_executor.layers.fused_moe import FusedMoE as UpstreamMoE
        from vllm.utils import cdiv


        class AscendFusedMoE(UpstreamMoE):
            def forward(self, hidden_states, router_logits, dtype=None):
                return super().forward(hidden_states, router_logits, dtype)  # passes dtype on: #101 breaks it


        def blocks(n):
            return cdiv(n)
        ''',
    "ds/attention.py": '''
        from vllm.attention.backend import AttentionBackend


        class AscendBackend(AttentionBackend):
            def get_name(self):
                return "ascend"
        ''',
    "ds/patch.py": '''
        import vllm.envs as envs
        from ds.compat import FusedMoE
        from other.lib import make_layer

        PATCHES = {"vllm.distributed.parallel_state.get_tp_group": lambda: "tp"}


        def _helper(x):
            return make_layer(x)


        def ascend_select_experts(logits, top_k):
            return logits[:top_k]


        def apply():
            if envs.VLLM_USE_V1:
                import vllm.model_executor.layers.fused_moe.layer as layer

                layer.select_experts = ascend_select_experts
            return FusedMoE
        ''',
}

START = datetime(2026, 5, 4, tzinfo=timezone.utc)
REPO_URL = "https://github.com/vllm-project/vllm"


@dataclass
class World:
    """The two repositories and the week's source file."""

    upstream: Path
    downstream: Path
    jsonl: Path
    merge_commits: dict[int, str]


def _patch(repo: Path, sha: str, path: str) -> str:
    text = git(repo, "diff", "--unified=3", f"{sha}^", sha, "--", path)
    start = text.find("\n@@")
    return text[start + 1:] if start >= 0 else ""


def line_of(world: World, path: str, marker: str) -> int:
    """The 1-based line of the downstream file ``path`` that holds ``marker``."""
    text = (world.downstream / path).read_text(encoding="utf-8")
    return next(i for i, line in enumerate(text.splitlines(), 1) if marker in line)


def build_world(root: Path) -> World:
    """Both repositories and the JSONL file (each PR with its merge commit and its patches)."""
    upstream, downstream = root / "upstream", root / "downstream"
    for repo in (upstream, downstream):
        repo.mkdir(parents=True)
        git(repo, "init", "-q", "-b", "main")
    write(upstream, UPSTREAM_BASE)
    commit(upstream, "base")
    write(downstream, DOWNSTREAM)
    commit(downstream, "downstream")
    shas: dict[int, str] = {}
    records = []
    for i, (number, (title, files)) in enumerate(UPSTREAM_PRS.items()):
        write(upstream, files)
        sha = commit(upstream, f"{title} (#{number})")
        shas[number] = sha
        changed = [FileRow(p, "removed" if text is None else "modified") for p, text in files.items()]
        records.append({
            "number": number, "url": f"{REPO_URL}/pull/{number}", "title": title, "author": "dev",
            "created_at": (START + timedelta(hours=i)).isoformat(),
            "merged_at": (START + timedelta(hours=i, minutes=30)).isoformat(), "labels": [], "body": "",
            "merge_commit": sha, "additions": 5, "deletions": 3,
            "files": [{"path": f.path, "status": f.status, "additions": 5, "deletions": 3,
                       "patch": _patch(upstream, sha, f.path)} for f in changed],
        })
    jsonl = root / "week.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return World(upstream, downstream, jsonl, shas)


@dataclass
class FileRow:
    path: str
    status: str


def readers_yaml(world: World, path: Path, *, git_url: bool = True) -> Path:
    """A readers file: one reader with the downstream (following only docs), one without it."""
    where = [f"      git: {world.downstream}", "      ref: main"] if git_url else [f"      path: {world.downstream}"]
    lines = [
        "readers:",
        "  - id: plugin-team", "    name: Plugin team", "    email: plugin@example.com", '    slack: "#plugin"',
        "    feishu: plugin-group", "    subsystems: [docs]", "    downstream: ascend",
        "  - id: docs-reader", "    name: Docs reader", "    email: docs@example.com", "    subsystems: [docs]",
        "downstreams:", "  ascend:", *where, "    packages: [ds]", "    upstream: [vllm]",
    ]
    path.write_text("\n".join(lines).replace("\n      ", "\n    ") + "\n", encoding="utf-8")
    return path


def facts_between(tmp_path: Path, before: dict[str, str | None], after: dict[str, str | None],
                  packages: tuple[str, ...], *, receivers: bool = True) -> list[Change]:
    """The facts of one commit (``after`` written over ``before``) in a real git repository made here."""
    repo = tmp_path / "upstream"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, before)
    commit(repo, "before")
    write(repo, after)
    sha = commit(repo, "after")
    diffs, _ = read_commits(UpstreamClone(repo / ".git"), [sha])
    return commit_facts(diffs[sha], Surface(packages=packages), receivers=receivers)


def match_downstream(tmp_path: Path, facts: list[Change], downstream: dict[str, str],
                     up: tuple[str, ...] = ("up",)) -> list[Impact]:
    """``facts`` matched against a downstream committed in its own repository and indexed from that checkout."""
    repo = tmp_path / "downstream"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, {"ds/__init__.py": "", **downstream})
    commit(repo, "downstream")
    with open_store(tmp_path / "state.sqlite") as store:
        index = load_index(DownstreamSpec("ds", path=str(repo), packages=("ds",), upstream=up), up, store=store)
    return match_changes(facts, UseTable.of("ds", index.uses, up), up)


def upstream_facts(tmp_path: Path, before: dict[str, str | None], after: dict[str, str | None],
                   packages: tuple[str, ...] = ("up",)) -> list[Change]:
    """The facts of ``before`` → ``after`` (one commit of a real repository), read with the upstream's tree."""
    repo = tmp_path / "upstream"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    write(repo, before)
    commit(repo, "before")
    write(repo, after)
    sha = commit(repo, "after")
    clone = UpstreamClone(repo / ".git")
    diffs, _ = read_commits(clone, [sha])
    return commit_facts(diffs[sha], Surface(packages=packages), tree=GitTree(clone, packages))


def upstream_impacts(tmp_path: Path, before: dict[str, str | None], after: dict[str, str | None],
                     downstream: dict[str, str]) -> list[Impact]:
    """The impacts of the upstream commit on a downstream committed in its own repository, indexed from it."""
    return match_downstream(tmp_path, upstream_facts(tmp_path, before, after), downstream)


def line_in(text: str, marker: str) -> int:
    """The 1-based line of ``text`` (dedented as the tests write it) that holds ``marker``."""
    return next(n for n, row in enumerate(textwrap.dedent(text).lstrip("\n").splitlines(), 1) if marker in row)
