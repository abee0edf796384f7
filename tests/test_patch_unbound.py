"""A keyword a PR passes to a constructor through a name its patch does not bind (a real git repository's diff with
git's Python hunk headers): ``Scheduler(…, hash_block_size=h)`` in the engine, where ``Scheduler`` is a variable
bound above the hunk (or the class, imported out of sight), and ``hash_block_size`` new on the scheduler's
``__init__``. A downstream subclass it hands upstream (its dotted path in a string, or patched over the class)
breaks; one it only builds itself is a check: the patch cannot tell the class from a configured one."""

from __future__ import annotations

from pathlib import Path

from tests.patch_support import change_of, matched, patch_only

SCHEDULER = "vllm/v1/core/sched/scheduler.py"
CORE = "vllm/v1/engine/core.py"

SCHEDULER_BEFORE = '''
class Scheduler:
    """The default scheduler."""

    def __init__(
        self,
        vllm_config,
        kv_cache_config,
        block_size: int,
        include_finished_set: bool = False,
        log_stats: bool = False,
    ) -> None:
        self.vllm_config = vllm_config
        self.block_size = block_size
        self.log_stats = log_stats
'''
SCHEDULER_AFTER = SCHEDULER_BEFORE.replace('''        block_size: int,
''', '''        block_size: int,
        hash_block_size: int | None = None,
''')

CORE_BEFORE = '''
from vllm.v1.core.sched.interface import SchedulerInterface


class EngineCore:
    """The engine's inner loop."""

    def __init__(self, vllm_config, kv_cache_config, log_stats: bool = False) -> None:
        Scheduler = vllm_config.scheduler_config.get_scheduler_cls()
        if vllm_config.scheduler_config.enable_chunked_prefill:
            vllm_config.scheduler_config.long_prefill_token_threshold = 0
        self.log_stats = log_stats
        self.vllm_config = vllm_config
        self.kv_cache_config = kv_cache_config
        block_size = vllm_config.cache_config.block_size
        self.scheduler: SchedulerInterface = Scheduler(
            vllm_config=vllm_config,
            kv_cache_config=kv_cache_config,
            include_finished_set=False,
            log_stats=self.log_stats,
            block_size=block_size,
        )
'''
CORE_AFTER = CORE_BEFORE.replace('''        block_size = vllm_config.cache_config.block_size
''', '''        block_size, hash_block_size = vllm_config.cache_config.block_sizes()
''').replace('''            block_size=block_size,
''', '''            block_size=block_size,
            hash_block_size=hash_block_size,
''')

MINE = '''from vllm.v1.core.sched.scheduler import Scheduler


class MyScheduler(Scheduler):
    def __init__(self, vllm_config, kv_cache_config, block_size, include_finished_set=False, log_stats=False):
        super().__init__(vllm_config, kv_cache_config, block_size, include_finished_set, log_stats)
'''
#: the plugin configures its scheduler by dotted path: upstream builds it through the variable
CONFIG = '''def check_and_update_config(vllm_config):
    vllm_config.scheduler_config.scheduler_cls = "ds.sched.MyScheduler"
'''


def _breaks(tmp_path: Path, core_before: str, core_after: str, downstream: dict[str, str]) -> dict[int, str]:
    pr = change_of(tmp_path, {SCHEDULER: SCHEDULER_BEFORE, CORE: core_before},
                   {SCHEDULER: SCHEDULER_AFTER, CORE: core_after}, python_headers=True)
    return {i.line: i.severity for i in matched(patch_only(pr), {"ds/__init__.py": "", **downstream})
            if i.path == "ds/sched.py"}


def test_a_keyword_passed_through_an_unbound_name_breaks_a_configured_subclass(tmp_path: Path) -> None:
    pr = change_of(tmp_path / "facts", {SCHEDULER: SCHEDULER_BEFORE, CORE: CORE_BEFORE},
                   {SCHEDULER: SCHEDULER_AFTER, CORE: CORE_AFTER}, python_headers=True)
    passes = [(c.symbol, c.path, c.detail, c.receiver) for c in patch_only(pr) if c.kind == "passes"]
    assert passes == [("Scheduler.__init__", SCHEDULER, "hash_block_size", "untyped")]
    # MyScheduler.__init__ (line 5) does not take it, and the plugin hands the class to upstream by its path
    assert _breaks(tmp_path / "configured", CORE_BEFORE, CORE_AFTER,
                   {"ds/sched.py": MINE, "ds/platform.py": CONFIG}) == {5: "breaks"}
    # patched over the upstream class: upstream builds it wherever it builds "Scheduler"
    patched = {"ds/sched.py": MINE + "\n\nimport vllm.v1.core.sched.scheduler\n\n"
               "vllm.v1.core.sched.scheduler.Scheduler = MyScheduler\n"}
    assert _breaks(tmp_path / "patched", CORE_BEFORE, CORE_AFTER, patched) == {5: "breaks"}


def test_a_subclass_the_downstream_only_builds_itself_is_a_check(tmp_path: Path) -> None:
    own = {"ds/sched.py": MINE, "ds/run.py": "from ds.sched import MyScheduler\n\n\ndef make(c, k):\n"
           "    return MyScheduler(c, k, 16)\n"}
    assert _breaks(tmp_path, CORE_BEFORE, CORE_AFTER, own) == {5: "check"}


def test_a_call_opened_in_the_hunk_before_is_read_across_the_unseen_arguments(tmp_path: Path) -> None:
    # a change above the call and the keyword below it: two hunks, three argument lines unseen between them
    before = CORE_BEFORE.replace("            vllm_config=vllm_config,\n", "            vllm_config=vllm_config,\n"
                                 "            mm_registry=None,\n            structured_output_manager=None,\n"
                                 "            scheduler_block_size=None,\n            extra=None,\n")
    after = CORE_AFTER.replace("            vllm_config=vllm_config,\n", "            vllm_config=vllm_config,\n"
                               "            mm_registry=None,\n            structured_output_manager=None,\n"
                               "            scheduler_block_size=None,\n            extra=None,\n")
    pr = change_of(tmp_path / "facts", {SCHEDULER: SCHEDULER_BEFORE, CORE: before},
                   {SCHEDULER: SCHEDULER_AFTER, CORE: after}, python_headers=True)
    core = next(f.patch for f in pr.files if f.path == CORE)
    assert core is not None and core.count("\n@@") == 1  # two hunks
    assert [c.symbol for c in patch_only(pr) if c.kind == "passes"] == ["Scheduler.__init__"]
    assert _breaks(tmp_path / "configured", before, after,
                   {"ds/sched.py": MINE, "ds/platform.py": CONFIG}) == {5: "breaks"}


def test_an_imported_class_or_a_keyword_no_new_parameter_takes_is_no_unbound_pass(tmp_path: Path) -> None:
    # the class imported in sight: the call builds upstream's own class (prdigest.collect.facts.patchcalls' case)
    imported = CORE_AFTER.replace("from vllm.v1.core.sched.interface import SchedulerInterface\n",
                                  "from vllm.v1.core.sched.interface import SchedulerInterface\n"
                                  "from vllm.v1.core.sched.scheduler import Scheduler\n"
                                  "from vllm.v1.core.sched.output import SchedulerOutput\n")  # the import in sight
    imported_before = CORE_BEFORE.replace("from vllm.v1.core.sched.interface import SchedulerInterface\n",
                                          "from vllm.v1.core.sched.interface import SchedulerInterface\n"
                                          "from vllm.v1.core.sched.scheduler import Scheduler\n")
    # a keyword the scheduler's __init__ does not gain
    other = CORE_AFTER.replace("hash_block_size=hash_block_size", "page_size=hash_block_size")
    for n, (before, after) in enumerate(((imported_before, imported), (CORE_BEFORE, other))):
        pr = change_of(tmp_path / str(n), {SCHEDULER: SCHEDULER_BEFORE, CORE: before},
                       {SCHEDULER: SCHEDULER_AFTER, CORE: after}, python_headers=True)
        assert not [c for c in patch_only(pr) if c.kind == "passes" and c.receiver == "untyped"], n


def test_a_hunk_far_below_a_call_left_open_is_not_read_as_its_arguments(tmp_path: Path) -> None:
    # the hunk before ends inside Scheduler(…); seven unseen lines close it and open Other(…), to which the next hunk
    # adds the keyword: more than six lines apart, the two are never read as one call
    more = "".join(f"            arg_{n}=None,\n" for n in range(6))
    before = CORE_BEFORE.replace("            kv_cache_config=kv_cache_config,\n",
                                 "            kv_cache_config=kv_cache_config,\n" + more) + \
        "        self.other = Other(\n            a=1,\n            b=2,\n            c=3,\n        )\n"
    after = before.replace("        block_size = vllm_config.cache_config.block_size\n",
                           "        block_size, hash_block_size = vllm_config.cache_config.block_sizes()\n")
    after = after.replace("            c=3,\n", "            c=3,\n            hash_block_size=hash_block_size,\n")
    pr = change_of(tmp_path, {SCHEDULER: SCHEDULER_BEFORE, CORE: before}, {SCHEDULER: SCHEDULER_AFTER, CORE: after},
                   python_headers=True)
    core = next(f.patch for f in pr.files if f.path == CORE)
    assert core is not None and core.count("\n@@") == 1 and "Other(" not in core  # Other's ( is out of sight
    assert not [c for c in patch_only(pr) if c.kind == "passes"]
