"""The evaluation and comparison reports as standalone HTML pages.

Every value reaches the page through Jinja2 with autoescaping on, so a PR title or a model's headline
holding ``<script>`` shows as text; links are made only from plain http(s) URLs.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup, escape

from prdigest.evaluation.metrics import ORDER
from prdigest.evaluation.results import EvalRow, EvalRun
from prdigest.kernel.text import CODE_SPAN, clean

_SAFE_URL = re.compile(r"https?://[^\s\"'<>]+")


def code(text: object) -> Markup:
    """Untrusted text with its `code spans` shown as code (the spans every medium reads): cleaned and escaped
    first, so nothing else becomes markup."""
    return Markup(CODE_SPAN.sub(lambda m: f"<code>{m.group(1)}</code>", str(escape(clean(text)))))

_STYLE = """
body{font:15px/1.45 system-ui,sans-serif;max-width:1000px;margin:2em auto;padding:0 1em;color:#1f2328}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #d0d7de;padding:.3em .6em;text-align:left}
td.n{text-align:right}.pr{border-top:1px solid #d0d7de;padding:.8em 0}.side{margin:.3em 0 .3em 1.2em}
.v{font-weight:600}.muted{color:#59636e}
code{font:88% SFMono-Regular,Menlo,Consolas,monospace;background:#eff1f3;padding:1px 4px;border-radius:4px}
"""

_BASE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>{{ title }}</title><style>{{ style }}</style></head><body>
<h1>{{ title }}</h1>
{% block body %}{% endblock %}
</body></html>
"""

_SIDE = """{% macro side(name, row) %}<div class="side"><span class="v">{{ name }}: {{ row | shipped }}</span>
 <span class="muted">· {{ row.subsystems | join(", ") }} · {{ row.drafter }}</span><br>
 <b>{{ row.headline | code }}</b><br>{{ row.rationale | code }}
 {% if row.focus %}<ol>{% for point in row.focus %}<li>{{ point | code }}</li>{% endfor %}</ol>{% endif %}
 {% if row.grounding %}<div class="muted">not supported by the PR: {{ row.grounding | join(", ") }}</div>{% endif %}
</div>{% endmacro %}
{% macro pr(row) %}{% if row.url | safe_url %}<a href="{{ row.url }}">#{{ row.number }}</a>\
{% else %}#{{ row.number }}{% endif %}
 {{ row.title | code }}{% endmacro %}
"""

_EVAL = """{% extends "base" %}{% import "side" as s %}{% block body %}
<p class="muted">{{ info.label }} · {{ info.repo }} · {{ gold_name }} (sha256 {{ info.gold_sha256[:12] }})
 {% if info.llm_base_url %}· {{ info.llm_base_url }}{% endif %}\
 · {{ info.started_at.strftime("%Y-%m-%d %H:%M") }} UTC</p>
<table>{% for name, value in rows %}<tr><th>{{ name }}</th><td class="n">{{ value }}</td></tr>{% endfor %}</table>
<h2>Confusion matrix</h2>
<table><tr><th>gold \\ drafted</th>{% for v in order %}<th>{{ v.value }}</th>{% endfor %}</tr>
{% for g in order %}<tr><th>{{ g.value }}</th>\
{% for p in order %}<td class="n">{{ figures.confusion[g.value][p.value] }}</td>{% endfor %}</tr>{% endfor %}
</table>
<h2>Subsystems</h2>
<table><tr><th>subsystem</th><th>tp</th><th>fp</th><th>fn</th><th>precision</th><th>recall</th><th>F1</th></tr>
{% for name, c in figures.per_subsystem.items() %}<tr><td>{{ name }}</td><td class="n">{{ c.tp }}</td>\
<td class="n">{{ c.fp }}</td>
<td class="n">{{ c.fn }}</td><td class="n">{{ c.precision | ratio }}</td>\
<td class="n">{{ c.recall | ratio }}</td><td class="n">{{ c.f1 | ratio }}</td></tr>{% endfor %}
</table>
<h2>Worst disagreements ({{ worst | length }})</h2>
{% for row in worst %}<div class="pr">{{ s.pr(row) }}
<div class="side"><span class="v">gold: {{ row.gold_verdict.value }}</span>
 <span class="muted">· {{ row.gold_subsystems | subsystems }}</span>\
{% if row.gold_why %}<br>{{ row.gold_why | code }}{% endif %}</div>
{{ s.side("drafted", row) }}</div>{% endfor %}
{% endblock %}"""

_COMPARE = """{% extends "base" %}{% import "side" as s %}{% block body %}
<p>A: {{ a.label }}<br>B: {{ b.label }}<br><span class="muted">{{ result.n }} PRs in both</span></p>
<h2>What differs</h2>
{% if result.setup %}<ul>{% for d in result.setup %}<li>{{ d | code }}</li>{% endfor %}</ul>\
{% else %}<p>Nothing in the recorded configuration.</p>{% endif %}
<table><tr><th>figure</th><th>A</th><th>B</th></tr>
{% for name, va, vb in result.figure_rows %}<tr><th>{{ name }}</th>\
<td class="n">{{ va }}</td><td class="n">{{ vb }}</td></tr>{% endfor %}
</table>
<h2>Significance</h2>
<table><tr><th>measure</th><th>only A right</th><th>only B right</th><th>p</th><th>verdict</th></tr>
{% for t in result.tests %}<tr><td>{{ t.measure }}</td><td class="n">{{ t.only_a }}</td>\
<td class="n">{{ t.only_b }}</td>
<td class="n">{{ "%.3g" | format(t.p_value) }}</td><td>{{ t.verdict }}</td></tr>{% endfor %}
</table>
<h2>PRs where A and B differ ({{ result.differences | length }})</h2>
{% for d in result.differences %}<div class="pr">{{ s.pr(d.a) }} <span class="muted">gold: {{ d.a.gold_verdict.value }}
 · {{ d.a.gold_subsystems | subsystems }}</span>
{{ s.side("A", d.a) }}{{ s.side("B", d.b) }}</div>{% endfor %}
{% endblock %}"""


def _ratio(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


_env = jinja2.Environment(
    loader=jinja2.DictLoader({"base": _BASE, "side": _SIDE, "eval": _EVAL, "compare": _COMPARE}),
    autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
)
_env.filters["ratio"] = _ratio
_env.filters["code"] = code
_env.filters["shipped"] = lambda row: row.shipped_label
_env.filters["subsystems"] = lambda names: "subsystems not labelled" if names is None else ", ".join(names)
_env.filters["safe_url"] = lambda url: bool(_SAFE_URL.fullmatch(str(url)))


def eval_html(run: EvalRun, figures: dict[str, Any], rows: list[tuple[str, str]], worst: list[EvalRow]) -> str:
    """The evaluation report as one HTML page."""
    return _env.get_template("eval").render(
        title=f"Evaluation: {run.info.label}", style=_STYLE, info=run.info, gold_name=Path(run.info.gold).name,
        figures=figures, rows=rows, order=ORDER, worst=worst)


def compare_html(a: EvalRun, b: EvalRun, result: Any) -> str:
    """The comparison of two runs as one HTML page (``result``: a ``comparison.Comparison``)."""
    return _env.get_template("compare").render(
        title=f"A/B: {a.info.label} vs {b.info.label}", style=_STYLE, a=a.info, b=b.info, result=result)
