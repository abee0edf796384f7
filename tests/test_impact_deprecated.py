"""A name upstream announces deprecated (kept as an alias, removed in a later release) is a check for every
downstream use of it (issue 36: vLLM 0.18.1 renamed ``group_mm_kwargs_by_modality`` to ``group_and_batch_mm_kwargs``
and kept the old name deprecated; tpu-inference adapted to it, and nothing was flagged). Real git repositories:
the upstream read with its tree, the downstream indexed from its checkout."""

from __future__ import annotations

from tests.impact_support import upstream_impacts

UTILS = "def group_by_modality(items):\n    return sorted(items)\n\n\ndef other(items):\n    return items\n"
NEW_UTILS = ("from typing_extensions import deprecated\n\n\ndef group_and_batch(items):\n    return sorted(items)\n\n\n"
             "@deprecated(\n    \"`group_by_modality` has been renamed to `group_and_batch`. \"\n"
             "    \"The old name will be removed in v0.19.\"\n)\ndef group_by_modality(items):\n"
             "    return group_and_batch(items)\n\n\ndef other(items):\n    return items\n")
DOWNSTREAM = {"ds/manager.py": "from up.utils import group_by_modality, other\n\n\n"
                               "def batch(items):\n    return group_by_modality(items), other(items)\n"}


def test_a_deprecated_name_is_a_check_where_the_downstream_uses_it(tmp_path):
    before = {"up/__init__.py": "", "up/utils.py": UTILS}
    impacts = upstream_impacts(tmp_path, before, {"up/utils.py": NEW_UTILS}, DOWNSTREAM)
    flagged = sorted((i.line, i.how, i.severity, i.fact) for i in impacts if i.fact.startswith("deprecated"))
    words = "deprecated: group_by_modality is deprecated, removed in v0.19"
    assert [(line, how, severity) for line, how, severity, _ in flagged] == [(1, "imports", "check"),
                                                                             (5, "calls", "check")]
    assert all(fact.startswith(words) for *_, fact in flagged)
    assert not [i for i in impacts if i.symbol.endswith(".other")]  # the name beside it is untouched
