"""A real upstream repository for the code-facts tests, made with git init/commit: one commit per PR of a
week, each doing one kind of thing to the code (renames, removals, signature changes, a moved module, an
env var, a pin, a CUDA kernel, a deleted file, a docs-only change), and the week's PR records."""

from __future__ import annotations

import os
import subprocess
import textwrap
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from prdigest.kernel.links import pr_link
from prdigest.kernel.models import Change, FileChange, PullRequest

_ENV = {**os.environ, "GIT_AUTHOR_NAME": "Dev", "GIT_AUTHOR_EMAIL": "dev@example.com",
        "GIT_COMMITTER_NAME": "Dev", "GIT_COMMITTER_EMAIL": "dev@example.com", "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1"}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=_ENV).stdout


def write(repo: Path, files: dict[str, str | None]) -> None:
    for path, text in files.items():
        target = repo / path
        if text is None:
            git(repo, "rm", "-q", path)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        git(repo, "add", path)


def commit(repo: Path, message: str) -> str:
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


BASE = {
    # The package's public surface (prdigest/collect/facts/reach.py): what users import, the kernels the docs name.
    "pkg/__init__.py": '"""pkg."""\n__all__ = ["Base", "FusedMoE", "old_name", "moved_func", "clamp", "legacy"]\n',
    "docs/api.md": "# API\n\nThe `rms_norm` op runs `rms_kernel`.\n",
    "pkg/layers.py": '''
        import abc


        class Base(abc.ABC):
            """A layer."""

            def forward(self, x):
                return x


        class Module:
            pass


        class FusedMoE(Module):
            def __init__(self, num_experts, top_k=2):
                self.num_experts = num_experts

            def get_kv_cache_spec(self, block_size=16):
                return {"block_size": block_size}


        def old_name(x, y, scale=1.0):
            total = x + y
            return total * scale


        def moved_func(a, b, *, mode="fast"):
            return (a, b, mode)


        def _private_helper(v):
            return v
        ''',
    "pkg/util.py": '''
        def clamp(value, low, high):
            return max(low, min(value, high))
        ''',
    "pkg/legacy.py": '''
        def legacy_helper(path, strict=False):
            return path
        ''',
    "pkg/envs.py": '''
        import os

        environment_variables = {
            "PKG_USE_FAST": lambda: os.getenv("PKG_USE_FAST", "0") == "1",
            "PKG_OLD_FLAG": lambda: os.getenv("PKG_OLD_FLAG", "x"),
        }
        ''',
    "pkg/args.py": '''
        import argparse
        from dataclasses import dataclass


        @dataclass
        class EngineArgs:
            model: str = "facebook/opt-125m"
            block_size: int = 16


        def make_parser():
            parser = argparse.ArgumentParser()
            parser.add_argument("--max-len", type=int, default=16)
            parser.add_argument("-q", "--quiet", action="store_true")
            return parser
        ''',
    "pkg/config.py": '''
        from dataclasses import dataclass


        @dataclass
        class CacheConfig:
            block_size: int = 16
            swap_space: float = 4.0
        ''',
    "requirements.txt": "torch==2.5.0\nnumpy>=1.26  # arrays\n",
    "csrc/kernels.cu": '''
        #include <torch/all.h>

        __global__ void rms_kernel(float* __restrict__ out, const float* __restrict__ in, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) out[i] = in[i];
        }

        void rms_norm(torch::Tensor& out, torch::Tensor& in) {
          rms_kernel<<<1, 256>>>(out.data_ptr<float>(), in.data_ptr<float>(), in.numel());
        }
        ''',
    "docs/index.md": "# Docs\n\nHello.\n",
    "tests/test_layers.py": '''
        def test_one():
            assert True
        ''',
}

#: The PRs of the week: number, title, the files they write (None deletes), and the facts each must yield
#: as (kind, symbol, detail) — all of them and nothing else.
WEEK: list[tuple[int, str, dict[str, str | None]]] = [
    (101, "Rename old_name, new parameters for get_kv_cache_spec, FusedMoE bases", {
        "pkg/layers.py": '''
            import abc


            class Base(abc.ABC):
                """A layer."""

                def forward(self, x):
                    return x

                @abc.abstractmethod
                def weight_loader(self, param, loaded_weight):
                    ...


            class Module:
                pass


            class FusedMoE(Module, Base):
                def __init__(self, num_experts, top_k=2):
                    self.num_experts = num_experts

                def get_kv_cache_spec(self, layer_names, block_size=32):
                    return {"block_size": block_size, "layers": layer_names}


            def new_name(x, y, scale=1.0):
                total = x + y
                return total * scale


            def moved_func(a, b, *, mode="fast"):
                return (a, b, mode)


            def _private_helper(v):
                return v
            ''',
    }),
    (102, "Move moved_func to pkg.ops.moved; util becomes helpers", {
        "pkg/layers.py": None,  # replaced below (the rewrite is the file without moved_func)
    }),
    (103, "Env, arguments, config fields and pins", {
        "pkg/envs.py": '''
            import os

            environment_variables = {
                "PKG_USE_FAST": lambda: os.getenv("PKG_USE_FAST", "1") == "1",
                "PKG_NEW_FLAG": lambda: int(os.getenv("PKG_NEW_FLAG", "3")),
            }
            ''',
        "pkg/args.py": '''
            import argparse
            from dataclasses import dataclass


            @dataclass
            class EngineArgs:
                model: str = "facebook/opt-125m"
                kv_cache_dtype: str = "auto"


            def make_parser():
                parser = argparse.ArgumentParser()
                parser.add_argument("--max-len", type=int, default=32)
                parser.add_argument("-q", "--quiet", action="store_true")
                parser.add_argument("--enable-prefix-caching", action="store_true", default=False)
                return parser
            ''',
        "pkg/config.py": '''
            from dataclasses import dataclass


            @dataclass
            class CacheConfig:
                block_size: int = 16
                swap_space: float = 4.0
                cache_dtype: str = "auto"
            ''',
        "requirements.txt": "torch==2.6.0\nnumpy>=1.26  # arrays\ntriton>=3.0\n",
    }),
    (104, "A new CUDA kernel, eps for rms_kernel, a Triton kernel", {
        "csrc/kernels.cu": '''
            #include <torch/all.h>

            __global__ void rms_kernel(float* __restrict__ out, const float* __restrict__ in, int n, float eps) {
              int i = blockIdx.x * blockDim.x + threadIdx.x;
              if (i < n) out[i] = in[i] + eps;
            }

            __global__ void silu_kernel(float* out, const float* in, int n) {
              int i = threadIdx.x;
              if (i < n) out[i] = in[i];
            }

            void rms_norm(torch::Tensor& out, torch::Tensor& in, double eps) {
              rms_kernel<<<1, 256>>>(out.data_ptr<float>(), in.data_ptr<float>(), in.numel(), eps);
            }
            ''',
        "pkg/triton_ops.py": '''
            import triton
            import triton.language as tl


            @triton.jit
            def _fwd_kernel(X, Y, N, BLOCK: tl.constexpr):
                pid = tl.program_id(0)
                tl.store(Y + pid, tl.load(X + pid))
            ''',
    }),
    (105, "Remove pkg.legacy; tests reshuffled", {
        "pkg/legacy.py": None,
        "tests/test_layers.py": '''
            def test_two():
                assert 1 + 1 == 2
            ''',
    }),
    (106, "Docs: say hello twice", {
        "docs/index.md": "# Docs\n\nHello.\n\nHello again.\n",
    }),
]

LAYERS_WITHOUT_MOVED = WEEK[0][2]["pkg/layers.py"].replace(  # type: ignore[union-attr]
    '''
            def moved_func(a, b, *, mode="fast"):
                return (a, b, mode)

''', "")
MOVED = {
    "pkg/ops/__init__.py": "",
    "pkg/ops/moved.py": '''
        def moved_func(a, b, *, mode="fast"):
            return (a, b, mode)
        ''',
}

#: The facts each PR must yield, (kind, symbol, detail): every one found, nothing else.
EXPECTED: dict[int, set[tuple[str, str, str]]] = {
    101: {("renamed", "new_name", "old_name→new_name"),
          ("signature", "FusedMoE.get_kv_cache_spec", "+layer_names, block_size=16→32"),
          ("bases", "FusedMoE", "+Base"),
          ("abstract", "Base.weight_loader", "abstract method added")},
    102: {("moved", "moved_func", ""), ("moved", "clamp", ""), ("file-renamed", "pkg/helpers.py", "")},
    103: {("env", "PKG_NEW_FLAG", "added"), ("env", "PKG_OLD_FLAG", "removed"), ("env", "PKG_USE_FAST", "default"),
          ("argument", "--max-len", "default"), ("argument", "--enable-prefix-caching", "added"),
          ("argument", "EngineArgs.block_size", "removed"), ("argument", "EngineArgs.kv_cache_dtype", "added"),
          ("config", "CacheConfig.cache_dtype", "added"),
          # triton: a requirement the repository never installed before, which pip brings with the package
          ("dependency", "torch", "changed"), ("dependency", "triton", "new requirement"),
          ("body", "make_parser", "body changed")},
    104: {("kernel", "rms_kernel", "+eps"), ("kernel", "silu_kernel", "added"),
          ("signature", "rms_norm", "+eps"), ("kernel", "_fwd_kernel", "added")},
    105: {("file-deleted", "pkg/legacy.py", ""), ("removed", "legacy_helper", ""),
          ("tests", "test_two", "added"), ("tests", "test_one", "removed")},
    106: set(),
}


@dataclass
class Upstream:
    """The repository, its PRs' merge commits by number, and the PR records a source would give."""

    path: Path
    commits: dict[int, str]
    prs: list[PullRequest]

    @property
    def url(self) -> str:
        return self.path.as_uri()


def _patches(repo: Path, sha: str) -> list[FileChange]:
    """The files of a commit as GitHub's REST API lists them: status, counts and the unified-diff hunks."""
    files: list[FileChange] = []
    names = git(repo, "diff", "--no-color", "-M", "--name-status", f"{sha}^1", sha).splitlines()
    for line in names:
        parts = line.split("\t")
        status, paths = parts[0], parts[1:]
        path = paths[-1]
        kind = {"A": "added", "D": "removed", "M": "modified"}.get(status[0], "renamed")
        patch = git(repo, "diff", "--no-color", "-M", f"{sha}^1", sha, "--", *paths)
        hunks = patch[patch.find("@@"):] if "@@" in patch else None
        plus = sum(1 for x in patch.splitlines() if x.startswith("+") and not x.startswith("+++"))
        minus = sum(1 for x in patch.splitlines() if x.startswith("-") and not x.startswith("---"))
        files.append(FileChange(path=path, status=kind, additions=plus, deletions=minus, patch=hunks,
                                previous_path=paths[0] if kind == "renamed" else None))
    return files


def commit_week(repo: Path, base: dict[str, str | None],
                prs: dict[int, tuple[str, dict[str, str | None]]]) -> list[PullRequest]:
    """A new repository at ``repo`` holding ``base``, then one commit per PR (``number: (title, files)``), as
    merged PRs with GitHub's file list and hunks; the facts tests run ``week_facts`` over them with a clone."""
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    write(repo, base)
    commit(repo, "Initial layout")
    merged: list[PullRequest] = []
    for number, (title, files) in prs.items():
        write(repo, files)
        sha = commit(repo, f"{title} (#{number})")
        merged.append(PullRequest(number=number, url=f"https://github.com/o/r/pull/{number}", title=title,
                                  author="dev", merged_at=datetime(2026, 11, 16, tzinfo=timezone.utc),
                                  merge_commit=sha, files=_patches(repo, sha)))
    return merged


def week_changes(root: Path, base: dict[str, str | None],
                 prs: dict[int, tuple[str, dict[str, str | None]]]) -> dict[int, list[Change]]:
    """:func:`commit_week` under ``root`` (a new folder), then each PR's facts as ``digest run --git`` reads them
    from a clone of it: PR number → its changes."""
    from prdigest.collect.facts import Surface, week_facts
    from prdigest.collect.git import open_clone

    merged = commit_week(root / "up", base, prs)
    return week_facts(merged, surface=Surface(), clone=open_clone((root / "up").as_uri(), state_dir=root / "s")).changes


def build_upstream(root: Path) -> Upstream:
    """The upstream repository (served to partial clones: filters and any-sha wants allowed) and its week."""
    repo = root / "upstream"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "uploadpack.allowFilter", "true")
    git(repo, "config", "uploadpack.allowAnySHA1InWant", "true")
    write(repo, BASE)
    commit(repo, "Initial layout")
    commits: dict[int, str] = {}
    prs: list[PullRequest] = []
    start = datetime(2026, 11, 16, 9, tzinfo=timezone.utc)
    for i, (number, title, files) in enumerate(WEEK):
        if number == 102:
            # A real merge commit: a branch of two commits merged with --no-ff; its first parent is main.
            git(repo, "checkout", "-q", "-b", "move")
            write(repo, {"pkg/layers.py": LAYERS_WITHOUT_MOVED, **MOVED})
            commit(repo, "Move moved_func")
            git(repo, "mv", "pkg/util.py", "pkg/helpers.py")
            commit(repo, "util -> helpers")
            git(repo, "checkout", "-q", "main")
            git(repo, "merge", "-q", "--no-ff", "-m", f"Merge pull request #{number} from dev/move", "move")
            sha = git(repo, "rev-parse", "HEAD").strip()
        else:
            write(repo, files)
            sha = commit(repo, f"{title} (#{number})")
        commits[number] = sha
        prs.append(PullRequest(number=number, url=pr_link("acme/pkg", number), title=title,
                               merged_at=start + timedelta(hours=i), files=_patches(repo, sha), merge_commit=sha))
    return Upstream(repo, commits, prs)
