"""A proposal as a commented rules file: where each subsystem came from and what to check.

Every value is written as a JSON string (valid YAML, escapes included), and every comment is stripped of
control characters and line breaks: a label or a CODEOWNERS title comes from a repository we do not
control and must not be able to add a line of YAML.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

from prdigest.classify.proposal.propose import DISPLAYED, Proposal, Proposed
from prdigest.kernel.text import one_line, truncate

_ORIGIN = {
    "labeler": "a label actions/labeler applies",
    "mergify": "a label mergify applies",
    "codeowners": "a CODEOWNERS section",
    "pr-labels": "a label on recent PRs",
    "tree": "a folder of code no label covers",
    "kind": "a kind of file every repository has",
}


def _comment(text: str, limit: int = 200) -> str:
    return truncate(one_line(text), limit)


def _str(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _list(key: str, values: list[str], indent: str) -> list[str]:
    if not values:
        return []
    return [f"{indent}{key}:"] + [f"{indent}  - {_str(v)}" for v in values]


def _subsystem(p: Proposed) -> list[str]:
    a = p.area
    out = [f"  # {_comment(p.shown)}: {_ORIGIN[a.origin]}."]
    if a.written_patterns:
        shown = ", ".join(a.written_patterns[:6]) + (f", … ({len(a.written_patterns)} in all)"
                                                      if len(a.written_patterns) > 6 else "")
        out.append(f"  #   as written: {_comment(shown, 300)}")
    for note in a.notes:
        out.append(f"  #   check: {_comment(note)}")
    out.append(f"  {p.name}:")
    out.append(f"    display: {{{', '.join(f'{lang}: {_str(p.shown)}' for lang in DISPLAYED)}}}")
    out += _list("paths", a.paths, "    ")
    out += _list("exclude_paths", a.exclude_paths, "    ")
    out += _list("titles", a.titles, "    ")
    out += _list("body", a.body, "    ")
    out += _list("labels", a.labels, "    ")
    return out


def render(proposal: Proposal, *, now: datetime | None = None) -> str:
    """The rules file text; it loads with :func:`prdigest.classify.rulesfile.load_rules` into ``proposal.rules()``."""
    when = (now or datetime.now(timezone.utc)).strftime("%Y-%m-%d")
    rules = proposal.rules()
    lines = [
        f"# Subsystem rules for {_comment(proposal.repo)}, proposed by `digest rules init` on {when}",
        f"# from {_comment(proposal.where)}.",
        "#",
        "# Read from the repository:",
        *[f"#   - {_comment(r)}" for r in proposal.read or ["no labeler, mergify or CODEOWNERS file"]],
        "#",
        "# Each label became the subsystem named by its slug (lower case, each run of other characters one '-')",
        "# and is shown as written. A label a bot applies from paths is recognised by those paths, weighed by",
        "# their share of a PR's lines (min_share), not by the label: a bot that labels every PR touching one",
        "# .md file would otherwise put every large PR under docs. Folders of code that no label covers became",
        "# subsystems named after the folder: rename them as the team does (readers subscribe by name).",
        "#",
        "# What to check before committing it:",
        "#   - `digest rules check THIS_FILE --source ...` on a recent week: no subsystem above ~40 % of the",
        "#     PRs, few in the catch-all, each PR where you expect it;",
        "#   - the `check:` lines below (approximations of the labeler's rules, folders to rename);",
        "#   - `order:` (most specific first) and `drafting:` (see the shipped vLLM rules for an example).",
    ]
    if proposal.notes:
        lines += ["#", "# Notes:"] + [f"#   - {_comment(n)}" for n in proposal.notes]
    lines += [
        "",
        f"fallback: {_str(rules.fallback)}",
        f"min_share: {rules.min_share}",
        "digest_shows: labels",
        "# Tests and examples follow the code they exercise: they count only for a PR that changes nothing else.",
    ]
    lines += _list("incidental_paths", list(rules.incidental_paths), "")
    if rules.drafting.file_kinds:
        kinds = ", ".join(f"{k}: {_str(v)}" for k, v in rules.drafting.file_kinds.items())
        lines += ["drafting:", f"  file_kinds: {{{kinds}}}"]
    if proposal.code is not None:
        code = proposal.code
        lines += ["# Where code facts (digest run --git) find environment variables, arguments and config classes;",
                  "# add `argument_classes: [EngineArgs]` for a dataclass whose fields are arguments.", "code:"]
        if code.packages:
            lines.append(f"  packages: [{', '.join(_str(p) for p in code.packages)}]")
        for key in ("env_files", "argument_files", "config_files"):
            lines += _list(key, list(getattr(code, key)), "  ")
    lines += ["", "subsystems:"]
    for p in proposal.subsystems:
        lines += _subsystem(p) + [""]
    return "\n".join(lines).rstrip() + "\n"
