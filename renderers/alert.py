"""A watch alert as plain text: the subject and the short message one reader gets when upstream PRs merged since
the last watch break their code. Each medium's notice (``Medium.notice``: e-mail, Slack, Feishu) escapes it for
itself; here every untrusted piece (PR titles, names, paths, signatures) is cleaned to one line and capped, and
a PR's URL is kept only when it is a pull request on an allowed host."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from prdigest.deliver.alert_log import AlertItem, AlertLine
from prdigest.kernel.i18n import Section, catalog, messages
from prdigest.kernel.links import DEFAULT_LINK_HOSTS, defang
from renderers.escape import one_line, pr_url, truncate
from renderers.impact import words as impact_words

#: Lines shown per PR (then "N more"), and PRs per alert (then "N more PRs").
LINES_PER_PR = 5
MAX_PRS = 20



def words(language: str) -> Section:
    """The alert's words (the catalog's ``alert.*``), in the reader's language when its catalog has them all."""
    return messages(catalog(language).whole("alert").language, "alert")


def _code(text: str, limit: int) -> str:
    return truncate(one_line(text).replace("`", "'"), limit)


def _shown(symbol: str) -> str:
    parts = symbol.split(".")
    return ".".join(parts[-2:]) if len(parts) >= 2 and parts[-2][:1].isupper() else parts[-1]


def alert_line(line: AlertLine, language: str) -> str:
    """``ds/ops.py:7 overrides FusedMoE.forward: forward(a, b, dtype=None) → forward(a, b)``."""
    how = impact_words(language)["how"]
    assert isinstance(how, Mapping)
    kind, _, what = line.fact.partition(": ")
    if line.before and line.after:
        name = _shown(line.symbol).rsplit(".", 1)[-1]
        # A signature is kept as its parameters: name it on both sides, "forward(a, b) → forward(a)".
        before, after = (f"{name}{x}" if x.startswith("(") else x for x in (line.before, line.after))
        change = f"{kind} {before} → {after}"
    else:
        change = f"{kind} {what}" if what else line.fact
    return (f"{_code(f'{line.path}:{line.line}', 200)} {how.get(line.how, line.how)} "
            f"{_code(_shown(line.symbol), 120)}: {_code(change, 240)}")


def alert_text(repo: str, downstream: str, commit: str, since: datetime, items: Sequence[AlertItem],
               language: str, link_hosts: tuple[str, ...] = DEFAULT_LINK_HOSTS) -> tuple[str, str]:
    """(subject, text) of one reader's alert about ``items`` (the PRs that break their ``downstream``)."""
    w = words(language)
    n = len(items)
    name = _code(downstream, 40)
    subject = w["subject"].format(downstream=name, n=n, repo=_code(repo, 100))
    out = [w["head"].format(n=n, repo=_code(repo, 100), since=f"{since:%Y-%m-%d %H:%M} UTC", downstream=name,
                            commit=_code(commit[:12], 12) or "?"), ""]
    for item in items[:MAX_PRS]:
        url = pr_url(item.url, item.number, link_hosts)
        # A URL in a title off the link hosts is defanged: Feishu's card would make a link of it.
        title = truncate(defang(one_line(item.title), link_hosts, repo), 160)
        out.append(f"#{item.number} {title}" + (f"  {url}" if url else ""))
        out += [f"  - {alert_line(line, language)}" for line in item.lines[:LINES_PER_PR]]
        if len(item.lines) > LINES_PER_PR:
            out.append(w["more"].format(n=len(item.lines) - LINES_PER_PR))
        out.append("")
    if n > MAX_PRS:
        out += [w["more_prs"].format(n=n - MAX_PRS), ""]
    out.append(str(w["foot"]))
    return subject, "\n".join(out)
