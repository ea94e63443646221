"""``report.html``: one self-contained page (inline CSS and SVG, no script, nothing loaded from
the network): the accuracy per database and per category as bar charts with their 95%
intervals, then every wrong answer with its question, gold and predicted SQL, the first rows of
both results and why they differ, then the broken golds."""

from __future__ import annotations

from html import escape
from typing import Any

from nl2sql.evaluation.report import Report, Summary, cost_line, format_accuracy
from nl2sql.evaluation.scoring import QuestionResult

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;
max-width:1100px;padding:0 16px;color:#1d2430}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
.meta{color:#5b6575}.big{font-size:30px;font-weight:600}
.charts{display:flex;flex-wrap:wrap;gap:24px}.chart{flex:1 1 480px}
.q{border:1px solid #d8dde6;border-radius:6px;padding:10px 14px;margin:12px 0}
.q h3{font-size:15px;margin:0 0 6px}.why{color:#a12622;margin:4px 0 8px}
pre{background:#f5f7fa;border-radius:4px;padding:6px 8px;white-space:pre-wrap;margin:4px 0;
font-size:12.5px}
.cols{display:flex;gap:16px;flex-wrap:wrap}.cols>div{flex:1 1 420px;min-width:0}
table.rows{border-collapse:collapse;font-size:12.5px;margin:4px 0;display:block;overflow-x:auto}
table.rows td,table.rows th{border:1px solid #d8dde6;padding:2px 6px;text-align:left}
table.rows th{background:#eef1f5}.muted{color:#7a8494}.tag{background:#eef1f5;border-radius:3px;
padding:0 5px;font-size:12px;margin-left:6px}
"""

_ROW_HEIGHT = 30
_LABEL_WIDTH = 170
_BAR_WIDTH = 330
_TEXT_WIDTH = 150


def bar_chart(title: str, groups: dict[str, Summary]) -> str:
    """An inline SVG bar chart: one bar per group (accuracy) with its 95% interval."""
    height = _ROW_HEIGHT * len(groups) + 34
    width = _LABEL_WIDTH + _BAR_WIDTH + _TEXT_WIDTH
    parts = [f'<svg role="img" class="bars" '
             f'width="{width}" height="{height}" viewBox="0 0 {width} {height}">',
             f"<title>{escape(title)}</title>"]
    for tick in (0, 0.5, 1):
        x = _LABEL_WIDTH + tick * _BAR_WIDTH
        parts.append(f'<line x1="{x}" y1="4" x2="{x}" y2="{height - 22}" stroke="#d8dde6"/>'
                     f'<text x="{x}" y="{height - 6}" font-size="11" text-anchor="middle" '
                     f'fill="#5b6575">{tick:.0%}</text>')
    for row, (name, summary) in enumerate(groups.items()):
        y = 8 + row * _ROW_HEIGHT
        label = name if len(name) <= 24 else name[:23] + "…"
        parts.append(f'<text x="{_LABEL_WIDTH - 8}" y="{y + 15}" font-size="12.5" '
                     f'text-anchor="end">{escape(label)}</text>')
        if summary.accuracy is None:
            parts.append(f'<text x="{_LABEL_WIDTH + 4}" y="{y + 15}" font-size="12" '
                         f'fill="#7a8494">no scored question</text>')
            continue
        width_px = max(summary.accuracy * _BAR_WIDTH, 1)
        colour = "#2f7d4f" if summary.accuracy >= 0.8 else \
            "#c08a1b" if summary.accuracy >= 0.5 else "#b43a30"
        parts.append(f'<rect class="bar" x="{_LABEL_WIDTH}" y="{y + 2}" width="{width_px:.1f}" '
                     f'height="{_ROW_HEIGHT - 10}" fill="{colour}" rx="2"/>')
        if summary.interval_95:
            low, high = (_LABEL_WIDTH + v * _BAR_WIDTH for v in summary.interval_95)
            mid = y + 2 + (_ROW_HEIGHT - 10) / 2
            parts.append(f'<path d="M{low:.1f} {mid - 5}v10M{low:.1f} {mid}H{high:.1f}'
                         f'M{high:.1f} {mid - 5}v10" stroke="#1d2430" stroke-width="1.3" '
                         f'fill="none"/>')
        text = f"{summary.accuracy:.0%}  ({summary.correct}/{summary.scored})"
        parts.append(f'<text x="{_LABEL_WIDTH + _BAR_WIDTH + 8}" y="{y + 15}" '
                     f'font-size="12.5">{escape(text)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _rows_table(columns: list[str], rows: list[list[Any]], count: int | None) -> str:
    if count is None:
        return '<p class="muted">no result</p>'
    head = "".join(f"<th>{escape(str(c))}</th>" for c in columns)
    body = "".join("<tr>" + "".join(
        f"<td>{'<span class=muted>NULL</span>' if v is None else escape(str(v))}</td>"
        for v in row) + "</tr>" for row in rows)
    more = f'<p class="muted">{len(rows)} of {count:,} rows</p>' if count > len(rows) else \
        f'<p class="muted">{count:,} row{"s" if count != 1 else ""}</p>'
    return f'<table class="rows"><tr>{head}</tr>{body}</table>{more}'


def _details(q: QuestionResult) -> str:
    """What the agent was given and spent, when known."""
    parts = []
    if q.table_recall is not None and q.gold_tables is not None:
        kept = {t.rsplit(".", 1)[-1].lower() for t in q.context_tables or []}
        missing = [t for t in q.gold_tables if t not in kept]
        parts.append(f"context kept {len(q.gold_tables) - len(missing)}/{len(q.gold_tables)} "
                     f"gold tables" + (f" (missing: {', '.join(missing)})" if missing else ""))
    if q.value_hint_recall is not None:
        parts.append(f"value hints found {q.value_hint_recall:.0%} of "
                     f"{', '.join(repr(v) for v in q.gold_literals or [])}")
    if q.attempts is not None:
        parts.append(f"{q.attempts} SQL attempt(s)")
    if q.input_tokens is not None:
        parts.append(f"{q.input_tokens:,} input / {q.output_tokens or 0:,} output tokens")
    if q.latency_seconds is not None:
        parts.append(f"{q.latency_seconds:.1f} s")
    return f'<div class="muted">{escape("; ".join(parts))}</div>' if parts else ""


def _question_block(q: QuestionResult) -> str:
    golds = "".join(f"<pre>{escape(sql)}</pre>" for sql in q.gold_sql)
    category = f'<span class="tag">{escape(q.category)}</span>' if q.category else ""
    predicted = f"<pre>{escape(q.predicted_sql)}</pre>" if q.predicted_sql else \
        '<p class="muted">no prediction</p>'
    return (f'<div class="q" id="q-{escape(q.id)}"><h3>{escape(q.id)} '
            f'<span class="tag">{escape(q.db_id)}</span>{category}</h3>'
            f"<div>{escape(q.question)}</div>"
            f'<div class="why">Why: {escape(q.reason or "")}</div>{_details(q)}'
            f'<div class="cols"><div><b>Gold SQL</b>{golds}'
            f"{_rows_table(q.gold_columns, q.gold_rows, q.gold_row_count)}</div>"
            f"<div><b>Predicted SQL</b>{predicted}"
            f"{_rows_table(q.predicted_columns, q.predicted_rows, q.predicted_row_count)}"
            f"</div></div></div>")


def _calibration_section(report: Report) -> list[str]:
    """Accuracy per confidence bucket (``--candidates N``): is 5/5 agreement right more often
    than 3/5?"""
    if not report.calibration:
        return []
    groups = {f"confidence {b.label}": b.as_summary() for b in report.calibration}
    return [f"<h2>Calibration ({report.settings.get('candidates') or '?'} candidates per "
            f"question)</h2>",
            '<p class="meta">Accuracy of the questions whose answer had this share of '
            "candidates agreeing.</p>",
            bar_chart("Accuracy per confidence", groups)]


def render_html(report: Report, title: str = "nl2sql evaluation") -> str:
    recall = []
    if report.table_recall is not None:
        recall.append(f"context table recall {report.table_recall:.0%}")
    if report.value_hint_recall is not None:
        recall.append(f"value-hint recall {report.value_hint_recall:.0%}")
    model = report.settings.get("model")
    if model:
        recall.append(f"model {model}")
    tokens = [q for q in report.questions if q.input_tokens is not None]
    if tokens:
        recall.append(f"{sum(q.input_tokens or 0 for q in tokens):,} input / "
                      f"{sum(q.output_tokens or 0 for q in tokens):,} output tokens")
    if (cost := cost_line(report)) is not None:
        recall.append(cost)
    wrong = report.wrong
    broken = report.broken
    sections = [
        f"<h1>{escape(title)}</h1>",
        f'<p class="meta">{escape(report.created_at)} · {report.total} questions · '
        f"{report.broken_gold} broken gold · {escape(' · '.join(recall))}</p>",
        f'<p><span class="big">{escape(format_accuracy(report))}</span> '
        f'<span class="meta">execution accuracy, {report.correct} of {report.scored} correct '
        f"(95% Wilson interval)</span></p>",
        *([f"<p>{escape(report.metrics.line())}</p>"] if report.metrics is not None else []),
        '<div class="charts">',
        f'<div class="chart"><h2>Per database</h2>{bar_chart("Accuracy per database", report.per_db)}</div>',
        f'<div class="chart"><h2>Per category</h2>'
        f'{bar_chart("Accuracy per category", report.per_category)}</div>',
        "</div>",
        *_calibration_section(report),
        f"<h2>Wrong answers ({len(wrong)})</h2>",
        *(_question_block(q) for q in wrong),
    ]
    if not wrong:
        sections.append('<p class="muted">None.</p>')
    if broken:
        sections.append(f"<h2>Broken gold queries ({len(broken)}), left out of the accuracy</h2>")
        sections += [f'<div class="q"><h3>{escape(q.id)} <span class="tag">{escape(q.db_id)}'
                     f'</span></h3><div>{escape(q.question)}</div><div class="why">'
                     f'{escape(q.reason or "")}</div>'
                     + "".join(f"<pre>{escape(s)}</pre>" for s in q.gold_sql) + "</div>"
                     for q in broken]
    body = "\n".join(sections)
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{escape(title)}</title><style>{_CSS}</style></head>\n<body>\n{body}\n"
            f"</body></html>\n")
