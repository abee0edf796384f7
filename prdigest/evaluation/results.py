"""What one evaluation run produced, per PR and for the run: the data ``eval.json`` carries.

Kept apart from the figures (``summary``) so ``--compare`` can read two earlier runs back and pair them
PR by PR, whatever drafter, model, prompt version or language produced each.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, field_validator

from prdigest.draft.registry import DRAFTERS
from prdigest.kernel.errors import ConfigError, first_problem
from prdigest.kernel.models import Language, Verdict

#: Drafter names of entries that are not the configured drafter's own work.
FALLBACK_DRAFTERS = ("offline-fallback", "placeholder")


class EvalConfig(BaseModel):
    """What to evaluate: the labelled file and one drafter configuration (the flow's parameters)."""

    model_config = ConfigDict(extra="forbid")

    gold: str = Field(description="Labelled JSONL: the source format with a 'gold' object per line")
    drafter: str = "offline"
    llm_base_url: str | None = None
    model: str | None = None
    language: Language | None = None
    rules: str | None = None
    repo: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
    state: str | None = None
    no_cache: bool = False
    #: The upstream's clone (a folder or URL), as ``digest run --git``: the facts and hunks come from it.
    git: str | None = None
    #: Keep the drafter's verdicts: do not apply the repo's calibration (then nothing is reported beside them).
    no_calibration: bool = False

    def settings_overrides(self) -> dict[str, object]:
        """The flags that override environment settings."""
        return {"language": self.language, "state": self.state, "llm_base_url": self.llm_base_url,
                "model": self.model, **({"git": self.git} if self.git else {})}

    @field_validator("drafter")
    @classmethod
    def _drafter(cls, value: str) -> str:
        try:
            DRAFTERS[value]  # the same registry the edition run builds its drafter from
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        return value


class RunInfo(BaseModel):
    """Which configuration produced a run, as recorded in its ``eval.json``."""

    model_config = ConfigDict(extra="ignore")

    drafter: str
    model: str | None = None
    prompt_version: str | None = None
    llm_base_url: str | None = None
    language: Language
    repo: str
    rules: str | None = None
    gold: str
    gold_sha256: str
    started_at: datetime
    no_cache: bool = False
    #: SHA-256 of the rules file that classified the PRs (the shipped one when none was given).
    rules_sha256: str | None = None
    #: The repo's verdict calibration applied (``digest calibrate``): when it was fitted, on how many labels, from
    #: what; None when none was (none kept, or ``--no-calibration``).
    calibration: str | None = None

    @property
    def label(self) -> str:
        """A short name for the configuration: drafter, prompt version, language."""
        parts = [self.drafter]
        if self.prompt_version:
            parts.append(f"prompt {self.prompt_version}")
        return f"{' · '.join(parts)} · {self.language}"


class EvalRow(BaseModel):
    """One labelled PR: the gold label, what the classifier and drafter made of it, and what it cost."""

    model_config = ConfigDict(extra="ignore")

    number: int
    url: str
    title: str
    gold_verdict: Verdict
    #: None when the label gives no subsystems (the row then counts for verdicts only).
    gold_subsystems: list[str] | None = None
    gold_why: str = ""
    #: The verdict that ships: the draft's after the connect step (relations, reverted PRs demoted).
    verdict: Verdict
    #: The drafter's own verdict, before the connect step (None in runs written before it was recorded).
    drafted_verdict: Verdict | None = None
    #: What would ship without the repo's calibration (after the connect step); None when no calibration applied.
    uncalibrated_verdict: Verdict | None = None
    #: The relations the connect step found (``reverts #41234``), as shipped.
    relations: list[str] = Field(default_factory=list)
    subsystems: list[str]
    headline: str
    rationale: str
    focus: list[str] = Field(default_factory=list)
    followups: list[str] = Field(default_factory=list)
    audience: str = ""
    drafter: str
    grounding: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    needs_editing: bool = False
    #: True when the draft came from the draft cache (this run spent nothing on it).
    cached: bool = False
    #: Seconds the draft took when it was made (for a cached draft: when it was first made, if known).
    seconds: float | None = None
    #: Tokens the draft cost when it was made, and what this run spent on it (0 for a cached draft).
    tokens_in: int = 0
    tokens_out: int = 0
    spent_in: int = 0
    spent_out: int = 0
    cost_usd: float = 0.0

    @property
    def fallback(self) -> bool:
        """True when the configured drafter failed and the entry is a fallback or placeholder."""
        return self.drafter in FALLBACK_DRAFTERS

    @property
    def verdict_right(self) -> bool:
        return self.verdict is self.gold_verdict

    @property
    def drafted(self) -> Verdict:
        """The drafter's own verdict (the shipped one for runs that did not record it)."""
        return self.drafted_verdict or self.verdict

    @property
    def shipped_label(self) -> str:
        """``skim``, or when the connect step changed it ``drafted deep-read → ships skim (reverted-by #2)``."""
        if self.drafted is self.verdict:
            return self.verdict.value
        why = f" ({', '.join(self.relations)})" if self.relations else ""
        return f"drafted {self.drafted.value} → ships {self.verdict.value}{why}"

    @property
    def subsystems_right(self) -> bool | None:
        """Whether the classifier's subsystems equal the label's; None when the label has none."""
        return None if self.gold_subsystems is None else set(self.subsystems) == set(self.gold_subsystems)


class EvalRun(BaseModel):
    """A whole evaluation: the configuration and one row per labelled PR, in file order."""

    # eval.json names them "config" and "entries"; in code they are the run's info and rows.
    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    info: RunInfo = Field(validation_alias=AliasChoices("config", "info"))
    rows: list[EvalRow] = Field(validation_alias=AliasChoices("entries", "rows"))


def load_run(path: Path) -> EvalRun:
    """An earlier run from its ``eval.json`` (or the folder holding it), for ``--compare``."""
    file = path / "eval.json" if path.is_dir() else path
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read an evaluation ({exc.strerror or exc}); pass a folder written "
                          "by `digest eval --out` or its eval.json") from None
    except ValueError as exc:
        raise ConfigError(f"{file}: not JSON ({exc}); pass an eval.json written by `digest eval`") from None
    try:
        return EvalRun.model_validate(data)
    except ValidationError as exc:
        problem = first_problem(exc)
        raise ConfigError(f"{file}: not an evaluation written by `digest eval` (field '{problem.field}': "
                          f"{problem.message}); "
                          "re-run `digest eval` to write it again") from None
