"""The words that give a prose reference its kind, in English and Chinese (:mod:`prdigest.connect.references`).

``PRE`` patterns end right before the reference (only :data:`FILLER` between the cue and ``#N``), ``POST``
patterns start right after it, ``TITLE_TAG`` patterns read the title's tags (they apply to the title's
references that have no cue of their own). A pattern is linear and bounded; add a phrase to the list of
its kind, with a row in tests/fixtures/relations/table.yaml.
"""

from __future__ import annotations

import re

#: What may stand between a cue and the number: spaces, a colon or bracket, "the PR", "commit", a quote.
FILLER = r"[\s:：(（\"“']*(?:(?:the|this|that|PR|PRs|pull\s+requests?|commits?|changes?|upstream)\s*[:：]?\s+)*" \
         r"[\s(（\"“']*"
_BUG = (r"(?:regressions?|bugs?|mistakes?|issues?|problems?|errors?|typos?|crash(?:es)?|breakages?|failures?|"
        r"oversights?|leaks?|hangs?|deadlocks?|races?|ooms?)")
_NTH = r"(?:\d+|one|two|three|four|five|first|second|third|fourth|fifth|i{1,3}|iv|v)"
_ZH_NTH = r"[一二三四五六七八九十\d]+"

_PRE: dict[str, list[str]] = {
    "reverts": [
        r"\brevert(?:s|ed|ing)?\b(?:\s+(?:of|back))?", r"\[\s*revert\s*\]", r"\broll(?:s|ed|ing)?\s+back(?:\s+of)?",
        r"\brollback(?:\s+(?:of|for))?", r"\bback(?:s|ed|ing)?\s+out(?:\s+of)?", r"\bund(?:o|oes|oing|id)\b(?:\s+of)?",
        r"\brevert(?:s|ing)?\s+(?:the\s+)?(?:\w+\s+){0,2}?(?:changes?|commits?|parts?|patch)\s+(?:from|in|of|by)",
        r"(?:回滚|回退|撤销|撤回|还原)(?:了|掉)?\s*(?:PR)?",
    ],
    "relands": [
        r"\bre-?land(?:s|ed|ing)?\b(?:\s+(?:of|for))?", r"\[\s*re-?land\s*\]",
        r"\bre-?appl(?:y|ies|ied|ying)\b(?:\s+(?:of|for))?",
        r"\bre-?(?:do|does|did|submit|submits|submitted|merge|merges|merged|open|opens|opened)\b(?:\s+(?:of|for))?",
        r"\bre-?introduc(?:e|es|ed|ing)\b", r"\b(?:bring(?:s|ing)?|brought)\s+back",
        r"\b(?:second|2nd|third|3rd|another|new)\s+(?:try|attempt|go|shot)\s*(?:at|of|on|for)?",
        r"\b(?:try|trying|tries)\s+again(?:\s+(?:at|with|on))?", r"\bretry\s+of",
        r"\battempt\s+#?(?:2|3|two|three)\s*(?:of|at|for|on)?",
        r"\boriginally(?:\s+(?:landed|merged|added|submitted|proposed))?(?:\s+(?:as|in|by))?",
        r"(?:重新(?:合入|合并|提交|应用|引入|落地|打开)|再次(?:合入|合并|提交|尝试)|(?:第二|第三|再一)次尝试|二次(?:合入|提交)|重提)"
        r"(?:了)?",
    ],
    "ports": [
        r"\bcherry[- ]?pick(?:s|ed|ing)?\b(?:\s+(?:\w+\s+){0,5}?(?:of|from|in))?", r"\[\s*cherry[- ]?pick\s*\]",
        r"\bback-?port(?:s|ed|ing)?\b(?:\s+(?:\w+\s+){0,5}?(?:of|from|in))?", r"\[\s*back-?port\s*\]",
        r"\bport(?:s|ed|ing)?\b(?:\s+of)?", r"\bsync(?:s|ed|ing)?\b(?:\s+(?:of|from))?",
        r"\bpicks?\b(?:\s+(?:of|from))?",
        r"(?:移植|同步|挑选|回合|反向移植|cherry-?pick|backport)(?:了|自)?",
    ],
    "fixes": [
        r"\b(?:fix(?:es|ed|ing)?|fixup|hotfix|bug-?fix|correct(?:s|ed|ing)?|repair(?:s|ed)?|patch(?:es|ed)?|"
        r"close[sd]?|resolve[sd]?)\b(?:\s+(?:for|to|of|on))?",
        rf"\b(?:fix(?:es|ed|ing)?|fixup|correct(?:s|ed|ing)?|repair(?:s|ed)?|address(?:es|ed)?|resolve[sd]?)\s+"
        rf"(?:\w+\s+){{0,4}}?{_BUG}\s+(?:from|in|of|since|after|with|introduced\s+(?:in|by|with)|caused\s+by|"
        rf"added\s+(?:in|by))",
        r"\b(?:regressions?|bugs?|mistakes?|oversights?|breakages?|typos?)\s+(?:from|in|of|since|"
        r"introduced\s+(?:in|by|with)|caused\s+by|added\s+(?:in|by))",
        rf"\b{_BUG}\b[^.#\n]{{0,50}}?\b(?:introduced|caused|added|brought\s+in)\s+(?:\w+\s+){{0,5}}?(?:in|by|with)",
        r"\b(?:broke|broken|breaks|breaking|regressed|wrong|fail(?:s|ed|ing)?|crash(?:es|ed)?|hangs?)\s+"
        r"(?:\w+\s+){0,2}?(?:after|since|by|in|with|from)",
        r"\bcaused\s+by", r"\bcorrection\s+(?:to|for|of)",
        r"(?:修复|修正|更正|纠正|解决)(?:了)?",
    ],
    "part-of-series": [
        rf"\bpart\s+{_NTH}\s*(?:of\s+\d+\s*)?(?:was|is|:|=|in|at)?", r"\bpart\s+of",
        r"\b(?:first|second|third|previous|prior|earlier|other)\s+(?:parts?|prs?|steps?|pieces?|half|one)\s*"
        r"(?:of\s+(?:this|the)\s+(?:series|stack)\s*)?(?:was|is|are|were|:|in|at|=)?",
        r"\b(?:series|stack|patch\s*set)\s+(?:\w+\s+){0,1}?(?:in|at|with|by)",
        r"\bsplit\s+(?:\w+\s+){0,2}?(?:out\s+of|off|from)(?:\s+(?:the|a|larger|bigger|big|original|main))*",
        rf"(?:系列[^。#\n]{{0,12}}部分|第{_ZH_NTH}部分|(?:上|前)一?(?:部分|个\s*PR)|拆分自|拆自)(?:见|在|为|是)?",
    ],
    "followed-up-by": [
        r"\b(?:needed|required|used|wanted)\s+by", r"\bprerequisite\s+(?:for|of|to)",
        r"\b(?:groundwork|preparation|prep)\s+for", r"\bun-?blocks?", r"\bwill\s+be\s+used\s+(?:by|in)",
    ],
    "follow-up-of": [
        r"\bfollow(?:s|ing|ed)?[- ]?ups?\b(?:\s+(?:to|of|for|on|from))?", r"\bfollow(?:s|ing)?\s+up\s+(?:on|to)",
        r"\bfollowing", r"\bafter", r"\bsince", r"\bbuilds?\s+(?:on|upon)(?:\s+top\s+of)?", r"\bon\s+top\s+of",
        r"\bstacked\s+(?:on(?:\s+top\s+of)?|after)", r"\b(?:depends|based)\s+on", r"\bextends?",
        r"\b(?:reverted|backed\s+out|rolled\s+back|fixed|addressed|resolved|solved|handled)\s+(?:in|by|with|via|as)",
        r"\b(?:discussed|suggested|requested|proposed|mentioned|deprecated|added|introduced|landed|merged)\s+"
        r"(?:in|on|by|with|as)",
        r"(?:跟进|延续|接续|基于|继)",
    ],
}

_POST: dict[str, list[str]] = {
    "reverts": [r"^\s*的(?:回滚|回退|撤销)"],
    "ports": [r"^\s*(?:的[^。\n#]{0,8})?(?:同步|移植|回合|cherry-?pick|backport)(?:到|至|进)",
              r"^\s*(?:to|onto|into)\s+(?:the\s+)?(?:release|releases/|v\d|stable)"],
    "fixes": [
        rf"^[\s)）]*(?:broke|breaks|broken|regressed|(?:introduced|caused|added)\s+(?:\w+\s+){{0,3}}?{_BUG})\b",
        r"^[\s)）]*(?:中|里)?(?:引入|造成|导致|带来)(?:了)?的",
    ],
    "part-of-series": [rf"^\s*的?(?:第{_ZH_NTH}部分|系列|下一部分)"],
    "followed-up-by": [r"^\s*(?:做准备|铺路|的前置)"],
    "follow-up-of": [r"^\s*(?:的)?(?:后续|之后|以后|以来|基础上|的基础上)", r"^\s*被(?:回滚|回退|撤销)"],
}

_TITLE: dict[str, list[str]] = {
    "reverts": [r"^\s*(?:\[[^\]\n]{0,40}\]\s*)*\[\s*revert\s*\]"],
    "relands": [r"^\s*(?:\[[^\]\n]{0,40}\]\s*)*(?:\[\s*re-?land\s*\]|re-?land\b|re-?apply\b)"],
    "ports": [r"^\s*(?:\[[^\]\n]{0,40}\]\s*)*\[\s*(?:cherry[- ]?pick|back-?port)\s*\]",
              r"^\s*\[\s*(?:release[/ -]|releases?/|v?\d+\.\d+(?:\.\d+)?\s*\])"],
}


def _compile(table: dict[str, list[str]], wrap: str) -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple((kind, re.compile(wrap.format("|".join(f"(?:{p})" for p in patterns)), re.IGNORECASE))
                 for kind, patterns in table.items())


PRE = _compile(_PRE, "(?:{})" + FILLER + "$")
POST = _compile(_POST, "(?:{})")
TITLE_TAG = _compile(_TITLE, "(?:{})")
