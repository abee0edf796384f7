"""A hook a PR makes and calls, read from its patches together (a real git repository's diff with git's Python
hunk headers): a new method that only raises NotImplementedError, whose class may be out of the hunk's sight,
and an added call of it on an imported name in another file. A downstream subclass that lacks it breaks."""

from __future__ import annotations

from tests.patch_support import change_of, matched, patch_only

INTERFACE = "vllm/platforms/interface.py"
BEFORE = '''
    import torch


    class Platform:
        """A platform."""

        device_name: str = "base"

        @classmethod
        def set_device(cls, device: torch.device) -> None:
            """Set the device."""
            raise NotImplementedError

        @classmethod
        def name(cls) -> str:
            return "base"
'''
HOOK = '''        @classmethod
        def manual_seed_all(cls, seed: int) -> None:
            """Seed every device."""
            raise NotImplementedError

'''
AFTER = BEFORE.replace("        @classmethod\n        def name", HOOK + "        @classmethod\n        def name")

SEED = "vllm/utils/seed.py"
SEED_BEFORE = '''
    import random

    import torch


    def set_random_seed(seed: int) -> None:
        random.seed(seed)
        torch.manual_seed(seed)
        if torch.cuda.is_available():
            torch.cuda.manual_seed_all(seed)
'''
SEED_AFTER = SEED_BEFORE.replace('''        if torch.cuda.is_available():
            torch.cuda.manual_seed_all(seed)
''', '''        from vllm.platforms import current_platform

        current_platform.manual_seed_all(seed)
''')

DOWNSTREAM = {"ds/__init__.py": "",
              "ds/platform.py": '''from vllm.platforms.interface import Platform


class NPUPlatform(Platform):
    @classmethod
    def manual_seed_all(cls, seed):
        pass


class HPUPlatform(Platform):
    pass
'''}


def test_a_hook_the_pr_makes_and_calls_breaks_a_subclass_without_it(tmp_path):
    pr = change_of(tmp_path, {INTERFACE: BEFORE, SEED: SEED_BEFORE}, {INTERFACE: AFTER, SEED: SEED_AFTER},
                   python_headers=True)
    hooks = [c for c in patch_only(pr) if c.kind == "abstract"]
    # git's header names set_device: the hook's class is out of the hunk's sight
    assert [(c.symbol, c.needed_by) for c in hooks] == [("*.manual_seed_all", ("vllm.utils.seed.set_random_seed",))]
    impacts = [(i.path, i.line, i.severity) for i in matched(patch_only(pr), DOWNSTREAM)]
    # HPUPlatform (line 10) lacks it; NPUPlatform defines it
    assert impacts == [("ds/platform.py", 10, "breaks")]


def test_a_new_hook_nobody_calls_or_a_guarded_or_local_call_is_no_break(tmp_path):
    guarded = SEED_AFTER.replace("        current_platform.manual_seed_all(seed)\n",
                                 '        if hasattr(current_platform, "manual_seed_all"):\n'
                                 "            current_platform.manual_seed_all(seed)\n")
    # a call on a local object: its class may be any, the new method's name is no proof
    local = SEED_AFTER.replace("        from vllm.platforms import current_platform\n",
                               "        current_platform = make_platform()\n")
    for n, seed_after in enumerate((SEED_BEFORE.replace("random.seed(seed)", "random.seed(seed + 0)"), guarded,
                                    local)):
        pr = change_of(tmp_path / str(n), {INTERFACE: BEFORE, SEED: SEED_BEFORE},
                       {INTERFACE: AFTER, SEED: seed_after}, python_headers=True)
        assert not [c for c in patch_only(pr) if c.kind == "abstract"]
        assert not [i for i in matched(patch_only(pr), DOWNSTREAM) if i.severity == "breaks"]


def test_a_hook_of_a_class_in_sight_called_on_an_imported_name_breaks(tmp_path):
    # the class line is the hunk's header: the obligation was a check before, now upstream needs it
    before = "class Platform:\n    @classmethod\n    def name(cls) -> str:\n        return 'x'\n"
    after = before + "\n    @classmethod\n    def manual_seed_all(cls, seed: int) -> None:\n" \
        "        raise NotImplementedError\n"
    pr = change_of(tmp_path, {INTERFACE: before, SEED: SEED_BEFORE}, {INTERFACE: after, SEED: SEED_AFTER},
                   python_headers=True)
    hooks = {c.symbol: c.needed_by for c in patch_only(pr) if c.kind == "abstract"}
    assert hooks == {"Platform.manual_seed_all": ("vllm.utils.seed.set_random_seed",)}
    breaks = [(i.path, i.line) for i in matched(patch_only(pr), DOWNSTREAM) if i.severity == "breaks"]
    assert breaks == [("ds/platform.py", 10)]


def test_a_hook_out_of_sight_reaches_only_subclasses_of_its_module_or_package(tmp_path):
    # `*.manual_seed_all` may be any class of vllm.platforms.interface (or a re-export of vllm.platforms), never a
    # class of the upstream's top package
    pr = change_of(tmp_path, {INTERFACE: BEFORE, SEED: SEED_BEFORE}, {INTERFACE: AFTER, SEED: SEED_AFTER},
                   python_headers=True)
    downstream = {"ds/__init__.py": "",
                  "ds/engine.py": "from vllm import LLM\n\n\nclass MyLLM(LLM):\n    pass\n",
                  "ds/platform.py": "from vllm.platforms import Platform\n\n\nclass HPUPlatform(Platform):\n    pass\n"}
    breaks = [(i.path, i.line) for i in matched(patch_only(pr), downstream) if i.severity == "breaks"]
    assert breaks == [("ds/platform.py", 4)]
