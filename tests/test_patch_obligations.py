"""Methods that now only raise NotImplementedError, read from patches alone (a real git repository's diff): a new
obligation on subclasses, told as a check."""

from __future__ import annotations

from tests.patch_support import change_of, matched, patch_only

PATH = "vllm/platforms/interface.py"
BEFORE = '''
    import torch


    class Platform:
        """A platform."""

        def seed(self, value: int) -> None:
            torch.manual_seed(value)

        def name(self) -> str:
            return "base"
'''
AFTER = BEFORE.replace("            torch.manual_seed(value)\n", '            """Seed every device."""\n'
                       "            raise NotImplementedError\n") + '''

        def manual_seed_all(
            self,
            seed: int,
        ) -> tuple[
            int,
            int,
        ]:
            raise NotImplementedError(
                "no devices"
            )


    class NewBackend:
        def run(self) -> None:
            raise NotImplementedError
'''


def test_a_method_that_now_only_raises_is_an_obligation(tmp_path):
    pr = change_of(tmp_path, {PATH: BEFORE}, {PATH: AFTER})
    facts = {c.symbol: c.detail for c in patch_only(pr) if c.kind == "abstract"}
    # the new method ends the file (no context after it) and its return annotation spans lines
    assert facts == {"Platform.seed": "raises NotImplementedError",
                     "Platform.manual_seed_all": "raises NotImplementedError (added)"}
    downstream = {"ds/__init__.py": "",
                  "ds/platform.py": '''from vllm.platforms.interface import Platform


class NPUPlatform(Platform):
    def seed(self, value):
        pass


class OtherPlatform(Platform):
    pass
'''}
    impacts = matched(list(patch_only(pr)), downstream)
    # NPUPlatform (line 4) defines seed but not manual_seed_all; OtherPlatform (line 9) defines neither (one
    # impact a line)
    subclasses = {(i.line, i.fact) for i in impacts if i.how == "subclasses"}
    assert (4, "abstract: Platform.manual_seed_all") in subclasses and {s[0] for s in subclasses} == {4, 9}
    assert {i.severity for i in impacts} == {"check"}


def test_a_body_only_partly_in_sight_is_no_obligation(tmp_path):
    before = "class Platform:\n    def seed(self):\n" + "".join(f"        x{i} = {i}\n" for i in range(12)) + \
        "        return 1\n"
    after = before.replace("        return 1\n", "        raise NotImplementedError\n")
    pr = change_of(tmp_path, {PATH: before}, {PATH: after})
    assert not [c for c in patch_only(pr) if c.kind == "abstract"]
