"""What a changed function now does differently (its casts, how many values it returns) and which new classes
implement another project's base, read from a real repository's commits through a clone, and the lessons the verdict
draws from them for PRs without a description (prdigest/collect/facts/bodyaspects.py, prdigest/collect/facts/
implements.py, prdigest/kernel/bodyfacts.py, prdigest/draft/learn.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from prdigest.collect.facts import Surface, week_facts
from prdigest.collect.git import open_clone
from prdigest.draft import learn
from prdigest.draft.verdict import assess
from prdigest.kernel import bodyfacts
from prdigest.kernel.models import PullRequest, Verdict
from prdigest.kernel.prtext.signals import extract
from tests.git_support import commit_week

NORM = '''
    import jax.numpy as jnp


    def l2norm(x, eps=1e-6):
        return x / jnp.sqrt(jnp.sum(x * x, axis=-1, keepdims=True) + eps)


    def gate(a, b):
        return a * b
'''
#: The norm and the gate computed in float32, cast back at the end: the GPU reference's precision.
NORM_FP32 = '''
    import jax.numpy as jnp


    def l2norm(x, eps=1e-6):
        xf = x.astype(jnp.float32)
        return (xf / jnp.sqrt(jnp.sum(xf * xf, axis=-1, keepdims=True) + eps)).astype(x.dtype)


    def gate(a, b, has_initial_state=None):
        out = a.astype(jnp.float32) * b
        return out.astype(a.dtype)
'''
TEST_NORM = '''
    from pkg.norm import l2norm


    def test_l2norm_keeps_its_dtype():
        assert l2norm is not None
'''
LAYER = '''
    class {name}:
        """A layer."""

        def __call__(self, x):
            out = self.run(x)
            return out

        def run(self, x):
            return x
'''
LAYER_IDS = '''
    class {name}:
        """A layer."""

        def __call__(self, x):
            out = self.run(x)
            ids = None
            return out, ids

        def run(self, x):
            return x
'''
MODULES = ("pkg/moe.py", "pkg/block.py", "pkg/model.py")
NAMES = ("MoE", "Block", "Model")
#: Three layers of one module, for a follow-up that adapts one model's classes.
ONE_MODULE = "\n".join(LAYER.format(name=n) for n in ("GemmaMoE", "GemmaBlock", "GemmaModel"))

def _connector(name: str, base: str, methods: int) -> str:
    """A module whose class ``name`` derives from ``base`` (``module:Class``), with ``methods`` methods of its own."""
    module, cls = base.split(":")
    body = "".join(f"\n    def step_{i}(self, x):\n        y = x + {i}\n        return y\n" for i in range(methods))
    return f"from {module} import {cls}\n\n\nclass {name}({cls}):\n    \"\"\"A connector.\"\"\"\n{body}"


PRS = {
    1: ("[Bug] Match the reference precision in the norm to close an accuracy gap",
        {"pkg/norm.py": NORM_FP32, "tests/test_norm.py": TEST_NORM}),
    2: ("Return expert ids from every MoE layer",
        {**{path: LAYER_IDS.format(name=name) for path, name in zip(MODULES, NAMES, strict=True)},
         "tests/test_layers.py": TEST_NORM.replace("l2norm_keeps", "layers_return")}),
    3: ("[Gemma] Follow the updated interface",
        {"pkg/gemma.py": ONE_MODULE.replace("return out\n", "return out, None\n"),
         "tests/test_gemma.py": TEST_NORM.replace("l2norm_keeps", "gemma")}),
    4: ("Compute the test reference in float32",
        {"tests/test_norm.py": TEST_NORM + "\n\ndef reference(x):\n    return x.astype('float32')\n"}),
    # another project's extension point implemented by a new module of a subsystem's size (130 methods: 520 lines)
    5: ("KV cache offloading to host memory",
        {"pkg/offload/__init__.py": "", "pkg/offload/offload_connector.py": _connector(
            "OffloadConnector", "upstream.kv_transfer.base:ConnectorBase", 130).replace(
            "\n\nclass ", "\nfrom upstream.kv_transfer.stats import Stats\n\n\nclass OffloadStats(Stats):\n"
            "    pass\n\n\nclass ", 1),
         "tests/test_offload.py": TEST_NORM.replace("l2norm_keeps", "offload")}),
    6: ("Add a custom op", {"pkg/ops.py": _connector("FastRotary", "upstream.layers.rotary:RotaryEmbedding", 20),
                            "tests/test_ops.py": TEST_NORM.replace("l2norm_keeps", "ops")}),
    7: ("Add a layer", {"pkg/layer.py": _connector("BigLayer", "torch.nn:Module", 130),
                        "tests/test_layer.py": TEST_NORM.replace("l2norm_keeps", "layer")}),
}
BASE = {"pkg/__init__.py": "", "pkg/norm.py": NORM, "pkg/gemma.py": ONE_MODULE,
        **{path: LAYER.format(name=name) for path, name in zip(MODULES, NAMES, strict=True)}}


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> dict[int, PullRequest]:
    root: Path = tmp_path_factory.mktemp("bodies")
    prs = commit_week(root / "up", BASE, PRS)
    found = week_facts(prs, surface=Surface(), clone=open_clone((root / "up").as_uri(), state_dir=root / "s"))
    assert found.problems == []
    return {pr.number: pr.model_copy(update={"changes": found.changes.get(pr.number, [])}) for pr in prs}


def _bodies(pr: PullRequest) -> dict[str, str]:
    return {c.symbol: c.detail for c in pr.changes if c.kind == "body"}


def test_casts_a_function_adds_are_said_in_its_body_fact(week) -> None:
    bodies = _bodies(week[1])
    assert bodies["l2norm"].startswith("numerics: +")
    assert "+x→float32" in bodyfacts.aspects(bodies["l2norm"])["numerics"].split("; ")
    assert bodyfacts.widened(bodyfacts.aspects(bodies["l2norm"])["numerics"])
    # ``gate`` gained a parameter: its fact is a signature's, and no body fact is added beside it (a downstream
    # overriding it is told once)
    assert {c.kind for c in week[1].changes if c.symbol == "gate"} == {"signature"}


def test_how_many_values_a_method_returns_is_said_when_it_changes(week) -> None:
    bodies = _bodies(week[2])
    assert {bodies[f"{name}.__call__"] for name in NAMES} == {"returns: 1→2"}
    assert "MoE.run" not in bodies  # unchanged: no fact at all


def test_a_test_function_is_not_read_for_numerics(week) -> None:
    assert not any(c.kind == "body" for c in week[4].changes)


def test_a_new_class_says_the_bases_it_implements_from_another_project(week) -> None:
    details = {c.symbol: c.detail for n in (5, 6, 7) for c in week[n].changes if c.kind == "added"}
    assert details["OffloadConnector"] == "implements upstream.kv_transfer.base.ConnectorBase"
    assert details["OffloadStats"] == "implements upstream.kv_transfer.stats.Stats"
    assert details["FastRotary"] == "implements upstream.layers.rotary.RotaryEmbedding"
    assert details["BigLayer"] == ""  # the tensor runtime's base is how any layer is written


@pytest.mark.parametrize(("number", "title", "lesson", "deep"), [
    (1, None, "numerics", True),
    (1, "Tidy the norm", None, False),  # the same casts, no failure of numerics named: a refactor's business
    (1, "Match the reference precision in the norm", None, False),  # no fix: a feature that happens to cast
    (2, None, "results", True),
    (3, None, None, False),  # a follow-up adapting one module's classes: the contract moved in an earlier PR
    (5, None, "extension", True),
    (6, None, None, False),  # a small adapter of one upstream class
    (7, None, None, False),  # a big module, but its base is the tensor runtime's
])
def test_code_read_lessons_make_a_pr_without_a_description_a_deep_read(week, number, title, lesson, deep) -> None:
    pr = week[number] if title is None else week[number].model_copy(update={"title": title})
    assert pr.body == ""
    s = extract(pr, [])
    keys = {x.key for x in learn.lessons(s)}
    assert (lesson in keys) if lesson else not keys & {"numerics", "results", "extension"}
    if lesson == "extension":  # said by the class its module is named after, not a helper type beside it
        assert learn.extension(s) == learn.Lesson("extension", "OffloadConnector(ConnectorBase)")
    a = assess(s)
    assert (a.verdict is Verdict.DEEP_READ) is deep
    if deep:
        assert not any(r.key == "unexplained" for r in a.reasons)  # the lesson is in the code, not the prose


@pytest.mark.parametrize(("text", "numerics", "returns", "widened", "arity"), [
    ("numerics: +x→float32 | returns: 1→2", "+x→float32", "1→2", True, True),
    ("numerics: +x→bfloat16; -x→float32", "+x→bfloat16; -x→float32", "", False, False),  # narrowed
    ("numerics: -x→float32", "-x→float32", "", False, False),
    ("returns: 0→1", "", "0→1", False, False),  # a value nobody received before: no caller unpacks it
    ("returns: 1→1/2", "", "1→1/2", False, True),
    ("body changed", "", "", False, False),
])
def test_body_aspects_read_back(text: str, numerics: str, returns: str, widened: bool, arity: bool) -> None:
    found = bodyfacts.aspects(text)
    assert (found.get("numerics", ""), found.get("returns", "")) == (numerics, returns)
    assert bodyfacts.widened(found.get("numerics", "")) is widened
    assert bodyfacts.arity_changed(found.get("returns", "")) is arity
    if text != bodyfacts.BODY_CHANGED:
        assert bodyfacts.detail(numerics=numerics, returns=returns) == text


def test_a_title_naming_accuracy_without_a_cast_widened_teaches_nothing(week) -> None:
    bare = [c.model_copy(update={"detail": bodyfacts.BODY_CHANGED}) if c.kind == "body" else c
            for c in week[1].changes]
    assert learn.numerics(extract(week[1].model_copy(update={"changes": bare}), [])) is None
