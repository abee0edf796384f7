"""A rules file proposed from a repository's own conventions: labels (labeler, mergify, recent PRs),
CODEOWNERS sections, the folders that hold its code, and conventional kinds (docs, CI, dependencies).

Labels become subsystems named by their slug and shown as written. A label the labeler or mergify
applies from paths is recognised by those paths, weighed by their share of the PR's lines, not by the
label itself: a bot adds ``documentation`` whenever one ``.md`` file changes, which would put every large
PR under docs. Labels seen on PRs that no rule applies are recognised by the label.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from prdigest.classify.proposal.code import propose_code
from prdigest.classify.proposal.codeowners import read_codeowners
from prdigest.classify.proposal.common_areas import KINDS, kind_area
from prdigest.classify.proposal.labeler import read_labeler
from prdigest.classify.proposal.mergify import read_mergify
from prdigest.classify.proposal.named_areas import Area, name_slug
from prdigest.classify.proposal.repo import RepoSnapshot
from prdigest.classify.proposal.tree import INCIDENTAL, area_name, folder_areas, is_incidental
from prdigest.classify.rulesfile import CodeRules, Drafting, Rules, SubsystemRule
from prdigest.kernel.errors import ConfigError
from prdigest.kernel.text import one_line

#: The languages a proposed rules file spells each label in (the same text: a label as the repo writes it).
DISPLAYED = ("zh-CN", "en")
#: Labels that say how a PR is handled, not what it is about.
PROCESS_LABEL = re.compile(
    r"^(ready|ready[- ]for[- ]review|needs[- :/].*|stale|wip|work in progress|do[- ]not[- ]merge|bug|bugfix|"
    r"enhancement|feature( request)?|good[- ]first[- ]issue|help[- ]wanted|duplicate|invalid|question|wontfix|"
    r"lgtm|approved|cla.*|size[/:].*|priority[/:].*|p[0-4]|kind[/:].*|type[/:].*|triage.*|status[/:].*|"
    r"release[- ]?(notes?|blocker).*|backport.*|automerge|merge[- ]queue|unstale|keep[- ]open|skip[- ].*)$",
    re.IGNORECASE)
#: A label on more than this share of recent PRs says little about any one of them.
MAX_LABEL_SHARE = 0.4
MIN_LABEL_PRS = 2
#: A label whose PRs change mostly one folder (this share of their lines) is recognised in that folder.
DOMINANT = 0.6
FALLBACKS = ("other", "misc", "catch-all")


@dataclass
class Proposed:
    """One proposed subsystem: its name, and the area it comes from."""

    name: str
    area: Area

    @property
    def shown(self) -> str:
        """How readers see it: the label or section as written, a folder as a path."""
        # Untrusted text: no control or bidi characters, one line, and short enough for a rules file.
        return one_line(self.area.written)[:60].strip() or self.name


@dataclass
class Proposal:
    """A proposed rules file and what a person should know before committing it."""

    repo: str
    where: str
    subsystems: list[Proposed]
    fallback: str
    incidental_paths: list[str]
    #: Files read and not found, names made distinct, patterns skipped: one line each.
    notes: list[str] = field(default_factory=list)
    read: list[str] = field(default_factory=list)
    #: Where code facts find environment variables, arguments and config classes (None: the tree shows none).
    code: CodeRules | None = None

    @property
    def names(self) -> list[str]:
        """The proposed names, in order."""
        return [p.name for p in self.subsystems]

    def rules(self) -> Rules:
        """The proposal as a validated :class:`Rules`, the same as its written file loads into."""
        subsystems = {}
        for p in self.subsystems:
            a = p.area
            subsystems[p.name] = SubsystemRule(
                display=dict.fromkeys(DISPLAYED, p.shown), paths=tuple(a.paths), exclude_paths=tuple(a.exclude_paths),
                titles=tuple(a.titles), body=tuple(a.body), labels=tuple(a.labels))
        kinds = {k: p.name for p in self.subsystems if p.area.origin == "kind"
                 for kind in KINDS if kind.name == p.name for k in kind.file_kinds}
        return Rules(fallback=self.fallback, incidental_paths=tuple(self.incidental_paths), subsystems=subsystems,
                     digest_shows="labels", drafting=Drafting(file_kinds=kinds),
                     code=self.code or CodeRules())


def _alternation(patterns: list[str]) -> list[re.Pattern[str]]:
    # One search per file instead of one per pattern; a pattern with inline global flags cannot be joined.
    if not patterns:
        return []
    try:
        return [re.compile("|".join(f"(?:{p})" for p in patterns))]
    except re.error:
        return [re.compile(p) for p in patterns]


def _matcher(area: Area) -> Callable[[str], bool]:
    paths, excluded = _alternation(area.paths), _alternation(area.exclude_paths)
    return lambda path: any(p.search(path) for p in paths) and not any(p.search(path) for p in excluded)


def _hits(area: Area, tree: list[str]) -> set[str]:
    match = _matcher(area)
    return {p for p in tree if match(p)}


def _read(snapshot: RepoSnapshot, notes: list[str], read: list[str]) -> tuple[list[Area], list[Area]]:
    """Label areas (labeler, then mergify, merged by label) and CODEOWNERS sections."""
    labels: dict[str, Area] = {}
    sections: list[Area] = []
    for kind in ("labeler", "mergify", "codeowners"):
        if kind not in snapshot.configs:
            continue
        path, text = snapshot.configs[kind]
        try:
            if kind == "labeler":
                found, shape = read_labeler(text, path)
            else:
                found = (read_mergify if kind == "mergify" else read_codeowners)(text, path)
        except ConfigError as exc:
            notes.append(f"{exc} (left out)")
            continue
        if kind == "labeler":
            read.append(f"{path} (actions/labeler {shape}, {len(found)} labels)")
        else:
            read.append(f"{path} ({len(found)} {'sections' if kind == 'codeowners' else 'labels'})")
        for area in found:
            if kind == "codeowners":
                sections.append(area)
            elif area.written.lower() in labels:
                labels[area.written.lower()].merge(area)
            else:
                labels[area.written.lower()] = area
    return list(labels.values()), sections


def _pr_label_areas(snapshot: RepoSnapshot, known: set[str], notes: list[str]) -> list[Area]:
    areas = []
    for label, count in snapshot.pr_labels.most_common():
        if label.lower() in known or PROCESS_LABEL.match(label):
            continue
        share = count / max(snapshot.prs_seen, 1)
        if count < MIN_LABEL_PRS or share > MAX_LABEL_SHARE:
            if count >= MIN_LABEL_PRS:
                notes.append(f"label '{label}' is on {count} of {snapshot.prs_seen} recent PRs: too common to "
                             "name an area (left out)")
            continue
        area = Area(written=label, origin="pr-labels", labels=[label],
                    notes=[f"on {count} of {snapshot.prs_seen} recent PRs, applied by people or a bot whose rules "
                           "were not read: recognised by the label only"])
        folders = snapshot.label_folders.get(label)
        if folders:
            top, lines = folders.most_common(1)[0]
            if top and not is_incidental(top + "/") and lines >= DOMINANT * sum(folders.values()):
                # The folder its PRs change is the area: recognised there too, and not proposed twice.
                area.paths.append(f"^{re.escape(top)}/")
                area.notes.append(f"{lines / sum(folders.values()):.0%} of its PRs' changed lines are under {top}/: "
                                  "recognised there too")
        areas.append(area)
    return areas


def _unique(base: str, taken: set[str]) -> str:
    name, n = base, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    return name


def propose(snapshot: RepoSnapshot) -> Proposal:
    """The rules a repository's own conventions suggest (see the module docstring)."""
    notes, read = list(snapshot.notes), list[str]()
    labels, sections = _read(snapshot, notes, read)
    missing = [k for k in ("labeler", "mergify", "codeowners") if k not in snapshot.configs]
    if missing and snapshot.files and not snapshot.where.startswith("the changed files"):
        notes.append(f"not found: {', '.join(missing)}")
    tree = [f.path for f in snapshot.files]
    code_tree = [p for p in tree if not is_incidental(p)]
    for area in labels:
        if snapshot.pr_labels.get(area.written):
            area.notes.append(f"on {snapshot.pr_labels[area.written]} of {snapshot.prs_seen} recent PRs")
    pr_areas = _pr_label_areas(snapshot, {a.written.lower() for a in labels}, notes)
    hits = {id(a): _hits(a, tree) for a in [*labels, *pr_areas]}
    kept_sections = []
    for section in sections:
        mine = _hits(section, tree)
        same = next((a for a in labels if mine and len(mine & hits[id(a)]) >= 0.8 * len(mine)), None)
        if same is not None:
            notes.append(f"CODEOWNERS section '{section.written}' owns the same files as label '{same.written}' "
                         "(left out)")
        elif tree and not mine:
            notes.append(f"CODEOWNERS section '{section.written}' matches no file of the tree (left out)")
        else:
            hits[id(section)] = mine
            kept_sections.append(section)
    named = [*labels, *kept_sections]
    covered: set[str] = set().union(*hits.values()) if hits else set()
    kinds = []
    for kind in KINDS:
        probe = _alternation(list(kind.paths))
        files = [p for p in tree if any(x.search(p) for x in probe)]
        share = sum(1 for p in files if p in covered) / len(files) if files else 0.0
        found = kind_area(kind, tree, share) if (files or not tree) else None
        if found is not None:
            kinds.append(found)
    folders = folder_areas(snapshot.files, covered.__contains__)
    if not (named or pr_areas or kinds or folders):
        # A rules file needs one subsystem: the conventional kinds, for the files the repo will grow.
        kinds = [a for kind in KINDS if (a := kind_area(kind, [], 0.0)) is not None]

    # Narrow label areas first: headlines and "for whom" name the most specific subsystem of a PR.
    code = set(code_tree)
    ordered = sorted(named, key=lambda a: len(hits[id(a)] & code)) + pr_areas + folders + kinds
    proposed: list[Proposed] = []
    taken: set[str] = set()
    slugs: dict[str, str] = {}
    for area in ordered:
        if area.labels == [area.written] and not area.paths and PROCESS_LABEL.match(area.written):
            notes.append(f"label '{area.written}' says how a PR is handled, not what it is about (left out)")
            continue
        if not area.has_evidence:
            notes.append(f"{area.origin} '{area.written}' has nothing a rules file can match (left out)")
            continue
        base = (area_name(area) if area.origin == "tree" else name_slug(area.written)) or "area"
        if area.origin == "kind":
            base = next(k.name for k in KINDS if k.shown == area.written)
        name = _unique(base, taken)
        if name != base:
            first = slugs.get(base, base)
            message = f"'{area.written}' and '{first}' both make the name '{base}': this one is '{name}'"
            notes.append(message)
            area.notes.append(message)
        slugs.setdefault(base, area.written)
        taken.add(name)
        proposed.append(Proposed(name, area))
    fallback = next(n for n in FALLBACKS if n not in taken)
    incidental = [p for p in INCIDENTAL if not tree or any(re.search(p, f) for f in tree)] or [INCIDENTAL[0]]
    return Proposal(snapshot.repo, snapshot.where, proposed, fallback, incidental, notes, read,
                    code=propose_code(tree))
