"""The "Affects your code" block in every medium, from domain objects: the week with none, hostile downstream paths,
zh-CN, and readers without a downstream (no block at all)."""

from __future__ import annotations

import json

import pytest

from prdigest.connect.variants import plan_variants
from prdigest.kernel.models import Impact
from prdigest.readers.file import Reader
from renderers.email import render_email
from renderers.feishu import render_feishu
from renderers.slack import render_slack
from renderers.text import render_text
from tests.factories import edition, entry


def _reader(rid: str, downstream: str | None) -> Reader:
    return Reader(id=rid, name=rid, email=f"{rid}@example.com", subsystems=("docs",), downstream=downstream)


def _media(ed, variant) -> dict[str, str]:
    return {"text": render_text(ed, variant), "email": render_email(ed, variant).html,
            "slack": json.dumps(render_slack(ed, variant)[0], ensure_ascii=False),
            "feishu": json.dumps(render_feishu(ed, variant)[0], ensure_ascii=False)}


def _variant(ed, reader: Reader):
    variants, _ = plan_variants(ed, [reader])
    return variants[0]


@pytest.mark.parametrize("language, none", [("en", "No upstream change this week affects ascend."),
                                            ("zh-CN", "本周没有上游改动影响 ascend。")])
def test_a_week_without_impact_says_so_in_one_line_in_every_medium(language, none):
    ed = edition([entry(1, ["docs"])], language)
    shown = _media(ed, _variant(ed, _reader("team", "ascend")))
    for medium, text in shown.items():
        assert none in (" ".join(text.split()) if medium == "text" else text), medium
    plain = _media(ed, _variant(ed, _reader("other", None)))
    assert not any("ascend" in text or "Affects your code" in text or "影响你的代码" in text
                   for text in plain.values())


def test_hostile_paths_and_names_stay_inert_and_an_unfollowed_pr_still_arrives():
    hostile = Impact(downstream="ascend", path="ds/<script>alert(1)</script>`*x*`.py", line=3,
                     symbol="vllm.x.<b>FusedMoE</b>", how="imports", severity="breaks",
                     fact="renamed: FusedMoE → <i>Factory</i>", number=2)
    ed = edition([entry(1, ["docs"]), entry(2, ["moe"], impact=[hostile])], "en")
    variant = _variant(ed, _reader("team", "ascend"))
    assert [e.number for e in variant.entries] == [1, 2]  # #2 is not in docs, and reaches the team
    shown = _media(ed, variant)
    assert "<script>" not in shown["email"] and "&lt;script&gt;" in shown["email"]
    assert "<script>" not in shown["slack"] and "&lt;script&gt;" in shown["slack"]
    assert "<i>Factory</i>" not in shown["email"]
    # The backtick in the path cannot end the code span early: it is shown as a quote.
    assert "`ds/<script>alert(1)</script>'*x*'.py:3`" in " ".join(shown["text"].split())
