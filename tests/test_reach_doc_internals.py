"""A user guide's "How it works" section names classes to explain the internals: a fenced block drawing the
repository's file tree, or quoting its own source (a ``def`` with no import). Those names are not given to
users, so removing them asks nothing (vllm-ascend #6947's proposers); a block users copy (it imports) and the
bases a quoted class derives from stay public. Real repositories (tests/git_support.py)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from prdigest.collect.facts import Surface, week_facts
from prdigest.collect.facts.reach import doc_names
from prdigest.collect.git import open_clone
from prdigest.kernel.actions import actions
from prdigest.kernel.models import Change, PullRequest
from tests.git_support import _patches, commit, git, write

GUIDE = """# Speculative decoding

Enable it with `--speculative-config '{"method": "mtp"}'`.

## How it works

```shell
plug
├── spec
│   ├── mtp.py
│   │   ├── MtpProposer
│   │   │   ├── dummy_run
```

The method picks the proposer:

```python
def get_method(method, config):
    if method == "mtp":
        return MtpProposer(config)
    return NgramProposer(config)
```

Write your own:

```python
class MyProposer(Proposer):
    pass
```

Call it from a script:

```python
from plug import make_drafter

drafter = make_drafter(config)
```
"""

BASE = {
    "plug/__init__.py": "from plug.spec.mtp import make_drafter\n",
    "plug/spec/__init__.py": "from plug.spec.mtp import MtpProposer, NgramProposer, Proposer, make_drafter\n",
    "plug/spec/mtp.py": """
        class Proposer:
            def dummy_run(self):
                return None


        class MtpProposer(Proposer):
            pass


        class NgramProposer(Proposer):
            pass


        def make_drafter(config):
            return config
        """,
    "docs/user_guide/spec_decode.md": GUIDE,
}
AFTER = {
    "plug/__init__.py": "",
    "plug/spec/__init__.py": "from plug.spec.mtp import Proposer\n",
    "plug/spec/mtp.py": """
        class Proposer:
            def dummy_run(self):
                return None
        """,
}


def _week(tmp_path: Path) -> list[Change]:
    repo = tmp_path / "up"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, BASE)
    commit(repo, "Initial layout")
    write(repo, AFTER)
    sha = commit(repo, "Clean up the proposers (#11)")
    pr = PullRequest(number=11, url="https://github.com/o/r/pull/11", title="Clean up the proposers", author="dev",
                     merged_at=datetime(2026, 11, 16, tzinfo=timezone.utc), merge_commit=sha,
                     files=_patches(repo, sha))
    return week_facts([pr], surface=Surface(), clone=open_clone(repo.as_uri(), state_dir=tmp_path / "state")).changes[11]


def test_classes_a_guide_names_only_to_explain_the_internals_are_internal_and_ask_nothing(tmp_path: Path) -> None:
    facts = _week(tmp_path)
    removed = [c for c in facts if c.kind == "removed" and c.symbol in ("MtpProposer", "NgramProposer")]
    assert removed and all(c.reach == "internal" for c in removed), [(c.symbol, c.reach_how) for c in removed]
    assert not [a for a in actions(facts, "en") if "Proposer" in a]
    dropped = [c for c in facts if c.symbol == "make_drafter" and c.kind == "removed"]
    assert dropped and all(c.reach == "public" for c in dropped), [c.reach_how for c in dropped]  # users import it


def test_a_block_users_copy_and_the_bases_of_a_quoted_class_stay_documented() -> None:
    names = doc_names("docs/user_guide/spec_decode.md", GUIDE)
    assert {"make_drafter", "Proposer", "plug"} <= names
    assert not {"MtpProposer", "NgramProposer", "dummy_run", "get_method"} & names
