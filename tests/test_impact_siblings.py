"""Uses the index did not see (issue 36): an upstream name reached through one of the downstream's own modules
that merely re-imports it, written as ``compat.run``, ``ds.compat.run``, ``cc.run`` or after a star import. The
upstream change is a real commit (tests.impact_support.facts_between)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_impact_uses import flagged, impacts, line

BEFORE = {"up/__init__.py": "", "up/layers.py": '''
    def run(x):
        return x


    def keep(x):
        return x
    '''}
AFTER = {"up/layers.py": '''
    def keep(x):
        return x
    '''}
COMPAT = "from up.layers import keep, run\n"


@pytest.mark.parametrize("use", [
    "from ds import compat\n\n\ndef go():\n    return compat.run(1)\n",
    "import ds.compat\n\n\ndef go():\n    return ds.compat.run(1)\n",
    "import ds.compat as cc\n\n\ndef go():\n    return cc.run(1)\n",
    "from ds.compat import *\n\n\ndef go():\n    return run(1)\n",
    "from . import compat\n\n\ndef go():\n    return compat.run(1)\n",
], ids=["from-package-import-module", "import-dotted", "import-as", "star-import", "relative"])
def test_a_removed_name_used_through_a_sibling_module_that_re_imports_it_breaks_the_use(tmp_path: Path,
                                                                                        use: str) -> None:
    _, found = impacts(tmp_path, BEFORE, AFTER, {"ds/__init__.py": "", "ds/compat.py": COMPAT, "ds/use.py": use})
    assert flagged(found) == {("ds/compat.py", 1, "imports"), ("ds/use.py", line(use, "run(1)"), "calls")}


def test_a_name_the_sibling_module_defines_itself_is_not_an_upstream_use(tmp_path: Path) -> None:
    compat = COMPAT + "\n\ndef helper(x):\n    return run(x)\n"
    use = "from ds import compat\n\n\ndef go():\n    return compat.helper(1) + compat.keep(2)\n"
    _, found = impacts(tmp_path, BEFORE, AFTER, {"ds/__init__.py": "", "ds/compat.py": compat, "ds/use.py": use})
    assert {i.path for i in found} == {"ds/compat.py"}
