"""A recording's report as one self-contained HTML file (charts as inline SVG drawn by pygal,
no script or style fetched from anywhere) or as Markdown without the charts.

Everything a host said (names, OS strings, iperf3's messages) is escaped for HTML here and
made printable (present.name) first, so no recording can inject markup or terminal codes.
"""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING, Sequence

from ..core import cells, units
from ..core.cells import NAME, configured_note, facts_view, host_cells, plain_header, plain_row
from ..core.freshness import as_seen
from ..core.model import HostUpdate
from ..core.oses import os_family_label
from ..present.flow_words import SEEN_HEAD, seen_cells, seen_line
from ..present.outcome import address_rows, matrix_cell, name, report, stale_note, state_word
from ..probe.watched import Outcome
from ..recording.timeline import Series, Timeline
from .recorded import clock, outcome_from_json

if TYPE_CHECKING:
    from ..probe.every_address import AddressRun

CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.6em; } h2 { border-bottom: 2px solid #ccc; margin-top: 2em; } h3 { margin-bottom: .3em; }
table { border-collapse: collapse; margin: .5em 0 1em; } \
td, th { border: 1px solid #ccc; padding: 3px 8px; text-align: left; }
th { background: #f0f0f0; } .muted { color: #777; } .chart { margin: 0 0 1.5em; }
.verdict { font-weight: bold; padding: 1px 6px; color: #fff; border-radius: 3px; }
.grid td { text-align: center; color: #fff; font-weight: bold; } .grid td.self { background: #eee; color: #777; }
"""


def e(text: object) -> str:
    return html.escape(name(text))


# What CommonMark and GitHub's tables and strikethrough act on anywhere in a line: emphasis,
# code, links and autolinks, raw HTML, entities, heading marks, cell borders, and the escape
# itself (or a name's own backslash would undo the escape after it).
_MD_ACTIVE = re.compile(r"([\\`*_\[\]<>#|~&])")


def md(text: object) -> str:
    """Text as Markdown shows it literally: made printable first (control characters as
    \\xNN), then every character Markdown acts on backslash-escaped."""
    return _MD_ACTIVE.sub(r"\\\1", name(text))


def _t(timeline: Timeline, when: float | None) -> str:
    return "(still raised at the end)" if when is None else clock(when)[11:]


def _buckets(s: Series) -> tuple[list, list, list, list]:
    """(rx points, tx points, errors points, drops points): the timeline's points (each the
    mean of its step, at most timeline.MAX_POINTS) at their wall-clock times; errors and drops
    per second only where some were counted, for their own axis."""
    rx = list(zip(s.times, s.rx_bps))
    tx = list(zip(s.times, s.tx_bps))
    errors = [(t, err) for t, err, _ in s.trouble if err]
    drops = [(t, drop) for t, _, drop in s.trouble if drop]
    return rx, tx, errors, drops


def _per_second(value) -> str:
    """An errors/drops mark's value (pygal's XY hands the point: time, count)."""
    count = value[1] if isinstance(value, (tuple, list)) else value
    return f"{count:.3g}/s"


# Steps between the time axis's labels: whole seconds, minutes, hours.
_TICKS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600)


def time_ticks(start: float, end: float, most: int = 10) -> list[float]:
    """Round wall-clock times between ``start`` and ``end`` for the time axis, at most
    ``most`` of them (never one label repeated)."""
    step = next((t for t in _TICKS if (end - start) / t <= most), _TICKS[-1])
    first = -(-start // step) * step
    return [first + k * step for k in range(int((end - first) // step) + 1)]


def _xy(title: str, s: Series, **kw):
    import pygal
    from pygal.style import DefaultStyle

    ends = (s.times[0], s.times[-1] if s.times[-1] > s.times[0] else s.times[0] + 1)
    return pygal.XY(
        js=[], width=1000, dynamic_print_values=False, title=title, x_title="local time", legend_at_bottom=True,
        include_x_axis=True, xrange=ends, x_labels=time_ticks(*ends), x_value_formatter=lambda t: clock(t)[11:],
        stroke_style={"width": 3}, explicit_size=True, style=DefaultStyle(opacity=".2", opacity_hover=".3"), **kw,
    )  # fmt: skip


def chart_svg(title: str, s: Series, tests: Sequence[tuple[float, float]] = ()) -> str:
    """rx and tx in bit/s, the windows ``tests`` ran in shaded; when errors or drops were
    counted, a chart of their own beneath (their count per second on its axis, not where the
    traffic was), on the same local wall-clock time axis the findings and tests are listed in."""
    rx, tx, errors, drops = _buckets(s)
    chart = _xy(
        title,
        s,
        height=260,
        show_dots=len(rx) < 60,
        y_title="bit/s",
        value_formatter=units.rate,
        allow_interruptions=True,
    )
    chart.add("rx", rx)
    chart.add("tx", tx)
    shade = _test_shade(s, tests, rx, tx)
    if shade:
        chart.add("a test ran", shade, fill=True, show_dots=False, stroke_style={"width": 0})
    svgs = [chart.render(is_unicode=True)]
    if errors or drops:
        marks = _xy(
            f"{title}: errors and drops",
            s,
            height=170,
            stroke=False,
            show_dots=True,
            dots_size=5,
            value_formatter=_per_second,
        )
        marks.add("errors/s", errors)
        marks.add("drops/s", drops)
        svgs.append(marks.render(is_unicode=True))
    return "".join(svg[svg.index("<svg") :] for svg in svgs)  # no XML declaration inside HTML


def _test_shade(s: Series, tests, rx, tx) -> list:
    """Each test window within the chart as a filled box up to the highest rate (None apart)."""
    first, last = s.times[0], max(s.times[-1], s.times[0] + 1)
    top = max((p[1] for p in (*rx, *tx) if isinstance(p, tuple) and p[1] is not None), default=0.0) or 1.0
    out: list = []
    for start, end in tests:
        a, b = max(start, first), min(end, last)
        if a < b:
            out += [(a, 0.0), (a, top), (b, top), (b, 0.0), None]
    return out[:-1]


def _facts() -> list[cells.Column]:
    """An interface's last facts: the plain tables' columns read from facts alone."""
    return [c for c in cells.PLAIN if c.fact]


def iface_head() -> tuple[str, ...]:
    return (*NAME.plain, *plain_header(_facts()), "ADDRESSES")


def _iface_rows(timeline: Timeline, host: str) -> list[tuple[str, ...]]:
    facts = _facts()
    rows = []
    for (h, _), s in timeline.series.items():
        if h != host or s.iface is None:
            continue
        i = s.iface
        rows.append((i.name, *plain_row(facts_view(i), False, facts), ", ".join(i.addresses) or "—"))
    return rows


def _configured_note(timeline: Timeline, host: str) -> str | None:
    return configured_note(s.iface for (h, _), s in timeline.series.items() if h == host and s.iface is not None)


def _state(update: HostUpdate) -> str:
    """A host's state word; ``stale`` for a live host whose samples had stopped coming, with
    when its last one came."""
    note = stale_note(update)
    return state_word(update) + (f", {note}" if note else "")


def _host_said(update) -> str:
    """What the columns say about the whole host, after its heading."""
    return "".join(f" — {c.title} {text}" for c, text in host_cells(update, False))


def _tcp_line(timeline: Timeline, host: str) -> str:
    """The host's TCP health over the session, in one line."""
    t = timeline.tcp.get(host)
    if t is None or not t.samples:
        return "TCP: not reported (this host's OS or source does not tell, or no interval was measured)"
    words = [
        f"TCP: {units.per_second(t.out_segs_ps / t.samples)} segments/s sent on average, "
        f"{units.percent(t.retrans_pct)} retransmitted"
    ]
    if t.peak_pct and t.peak_at is not None:
        words.append(f" (worst interval {units.percent(t.peak_pct)} at {_t(timeline, t.peak_at)})")
    if "pruned" in t.told:
        words.append(f"; receive-buffer drops {units.per_second(t.pruned_ps / t.samples)}/s")
    if "csum" in t.told:
        words.append(f"; bad checksums {units.per_second(t.csum_errs_ps / t.samples)}/s")
    return "".join(words)


FLOWS_SHOWN = 20  # per host, the busiest by their peak rates


def _flows(timeline: Timeline, host: str) -> tuple[str, list[tuple[str, ...]]]:
    """The host's recorded flows: a line saying what was recorded, and a row per flow."""
    flows = timeline.flows.get(host)
    at = lambda t: _t(timeline, t)  # noqa: E731
    rows = [seen_cells(s, at) for s in flows.busiest(FLOWS_SHOWN)] if flows else []
    return seen_line(host, flows, at), rows


FINDING_HEAD = ("from", "until", "severity", "code", "where", "message", "evidence", "next step")
TEST_HEAD = ("when", "test", "verdict", "summary")


def _findings_rows(timeline: Timeline) -> list[tuple[str, ...]]:
    return [
        (
            _t(timeline, f.since),
            _t(timeline, f.until),
            f.severity,
            f.code,
            f"{f.host}/{f.interface}" if f.interface else f.host,
            f.message,
            f.evidence,
            f.hint,
        )
        for f in timeline.findings
    ]


def _findings_md(timeline: Timeline) -> list[str]:
    """Each finding as a ticket wants it: what, where and when, then its evidence and the
    next step on lines of their own."""
    out = []
    for when, until, severity, code, where, message, evidence, hint in _findings_rows(timeline):
        out.append(f"- **{md(code)}** ({md(severity)}) {md(where)}, {md(when)} – {md(until)}: {md(message)}")
        out += [f"  - {label}: {md(text)}" for label, text in (("evidence", evidence), ("next step", hint)) if text]
    return out


def _outcomes(timeline: Timeline) -> list[tuple[float, bool, Outcome]]:
    out: list[tuple[float, bool, Outcome]] = []
    for event in timeline.tests:
        try:
            out.append((float(event["t"]), bool(event.get("matrix")), outcome_from_json(event["outcome"])))
        except (KeyError, TypeError, ValueError):
            continue  # a damaged entry: the others still show
    return out


def _matrix(outcomes) -> tuple[list[str], dict]:
    cells = {(o.result.src, o.result.dst): o for _, in_matrix, o in outcomes if in_matrix}
    hosts = list(dict.fromkeys(h for pair in cells for h in pair))
    return hosts, cells


def _address_runs(
    timeline: Timeline, outcomes: list[tuple[float, bool, Outcome]]
) -> list[tuple[float, Outcome | AddressRun]]:
    """The tests in order, a run of one pair through several of DST's addresses (the
    dashboard's "all addresses": back to back, nothing between) gathered into one
    ``AddressRun`` compared as it was live (PATH_DIFFERS); every other test on its own."""
    from ..probe.every_address import judge_run, tested

    groups: list[list[tuple[float, Outcome, bool]]] = []
    for when, in_matrix, o in outcomes:
        last = groups[-1][-1][1] if groups else None
        r = o.result
        if (
            last is not None and not in_matrix and r.src != r.dst
            and (last.result.src, last.result.dst) == (r.src, r.dst)
            and r.address not in {x.result.address for _, x, _ in groups[-1]} and not groups[-1][-1][2]
        ):  # fmt: skip
            groups[-1].append((when, o, in_matrix))
        else:
            groups.append([(when, o, in_matrix)])
    out: list[tuple[float, Outcome | AddressRun]] = []
    for group in groups:
        if len(group) == 1:
            out.append((group[0][0], group[0][1]))
            continue
        src, dst = group[0][1].result.src, group[0][1].result.dst
        dst_update = timeline.hosts.get(dst)
        out.append(
            (
                group[0][0],
                judge_run(src, dst, [tested(o.result.address, o, dst_update) for _, o, _ in group], dst_update),
            )
        )
    return out


def _table(head: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> str:
    out = ["<table><tr>" + "".join(f"<th>{e(h)}</th>" for h in head) + "</tr>"]
    out += ["<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in rows]
    return "\n".join(out) + "</table>"


def _head(timeline: Timeline) -> list[tuple[str, str]]:
    rec = timeline.recording
    hosts = hosts_line(timeline.hosts.values())
    return [
        ("recording", str(rec.path)),
        (
            "span",
            f"{clock(timeline.start)} – {clock(timeline.end)[11:]} ({timeline.end - timeline.start:.0f} s)"
            + (" — cut short" if rec.truncated else ""),
        ),
        ("recorded by", f"linkdeck {rec.header.get('linkdeck', '?')}"),
        ("hosts", hosts or "none"),
        *(("damaged", note) for note in rec.damage.notes()),
    ]


def hosts_line(updates) -> str:
    """The hosts by OS, each OS once: "3 × debian 12 (kernel 6.1): h1, h2, h3; nas01 (truenas
    13.0)" (each host's heading has its whole OS string)."""
    by_os: dict[str, list[str]] = {}
    for u in updates:
        by_os.setdefault(os_family_label(u), []).append(u.host)
    return "; ".join(
        f"{len(hosts)} × {os}: {', '.join(hosts)}" if len(hosts) > 1 else f"{hosts[0]} ({os})"
        for os, hosts in by_os.items()
    )


def render_html(timeline: Timeline) -> str:  # noqa: C901 - the report's sections in order
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>linkdeck "
        f"report</title><style>{CSS}</style></head><body>"
    ]
    parts.append("<h1>linkdeck report</h1>" + _table(("", ""), _head(timeline)))
    for host, last in timeline.hosts.items():
        update = as_seen(last, timeline.end)  # as the recording ended: stale once it went quiet
        parts.append(
            f"<h2>{e(host)} <span class='muted'>{e(update.os_detail or update.os or '')} "
            f"— {e(_state(update))}{e(_host_said(update))}</span></h2>"
        )
        parts.append(f"<p>{e(_tcp_line(timeline, host))}</p>")
        said, flow_rows = _flows(timeline, host)
        muted = "" if flow_rows else " class='muted'"
        parts.append(f"<p{muted}>{e(said)}</p>" + (_table(SEEN_HEAD, flow_rows) if flow_rows else ""))
        rows = _iface_rows(timeline, host)
        parts.append(_table(iface_head(), rows) if rows else "<p class='muted'>no samples recorded</p>")
        note = _configured_note(timeline, host)
        if note:
            parts.append(f"<p class='muted'>{e(note)}</p>")
        for (h, iface), s in timeline.series.items():
            if h != host:
                continue
            if not any(s.rx_bps) and not any(s.tx_bps) and not s.trouble:
                parts.append(f"<p class='muted'>{e(iface)}: no traffic in the whole recording</p>")
                continue
            parts.append(
                f"<div class='chart'>{chart_svg(f'{name(host)} / {name(iface)}', s, timeline.test_windows(host))}</div>"
            )
    parts.append("<h2>Findings</h2>")
    rows = _findings_rows(timeline)
    parts.append(_table(FINDING_HEAD, rows) if rows else "<p class='muted'>none raised</p>")
    outcomes = _outcomes(timeline)
    parts.append("<h2>Tests</h2>")
    if not outcomes:
        parts.append("<p class='muted'>no test was run while recording</p>")
    for when, outcome in _address_runs(timeline, outcomes):
        if not isinstance(outcome, Outcome):  # one pair through each address: one table
            table = address_rows(outcome)
            parts.append(
                f"<h3>{e(clock(when)[11:])} {e(units.arrow(name(outcome.src), name(outcome.dst)))}: "
                f"{len(table) - 1} addresses, one test after another</h3>"
            )
            parts.append(_table(table[0], table[1:]))
            causes = [(c.code, c.message, c.evidence) for c in outcome.causes]
            parts.append(
                _table(("cause", "what", "evidence"), causes)
                if causes
                else "<p class='muted'>no address differs from the others</p>"
            )
            continue
        rep = report(outcome)
        colour = rep.status.tone.html
        parts.append(
            f"<h3>{e(clock(when)[11:])} {e(rep.title)} <span class='verdict' "
            f"style='background:{colour}'>{e(rep.status.upper())}</span></h3>"
        )
        parts.append(f"<p>{e(rep.summary)}</p>" + (_table(("", ""), list(rep.rows)) if rep.rows else ""))
        if rep.causes:
            parts.append(_table(("cause", "what", "evidence"), list(rep.causes)))
    hosts, cells = _matrix(outcomes)
    if cells:
        parts.append(
            "<h2>All-pairs matrix</h2><p class='muted'>row: "
            "sender, column: receiver</p><table class='grid'><tr><th></th>"
        )
        parts.append("".join(f"<th>{e(h)}</th>" for h in hosts) + "</tr>")
        for src in hosts:
            parts.append(f"<tr><th>{e(src)}</th>")
            for dst in hosts:
                o = cells.get((src, dst))
                if o is None:
                    parts.append("<td class='self'>—</td>")
                    continue
                text, level = matrix_cell(o)
                parts.append(f"<td style='background:{level.tone.html}'>{e(text)}</td>")
            parts.append("</tr>")
        parts.append("</table>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


def _md_table(head: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> str:
    lines = ["| " + " | ".join(md(h) for h in head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(md(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def render_markdown(timeline: Timeline) -> str:
    out = ["# linkdeck report", "", _md_table(("", ""), _head(timeline)), ""]
    for host, last in timeline.hosts.items():
        update = as_seen(last, timeline.end)  # as the recording ended: stale once it went quiet
        out += [
            f"## {md(host)} — {md(update.os_detail or update.os or '')} ({_state(update)}){md(_host_said(update))}",
            "",
        ]
        rows = _iface_rows(timeline, host)
        said, flow_rows = _flows(timeline, host)
        out += [md(_tcp_line(timeline, host)), "", md(said), ""] + (
            [_md_table(SEEN_HEAD, flow_rows), ""] if flow_rows else []
        )
        out += [_md_table(iface_head(), rows) if rows else "no samples recorded", ""]
        note = _configured_note(timeline, host)
        out += [md(note), ""] if note else []
    out += ["## Findings", "", *(_findings_md(timeline) or ["none raised"]), "", "## Tests", ""]
    outcomes = _outcomes(timeline)
    for when, outcome in _address_runs(timeline, outcomes):
        if not isinstance(outcome, Outcome):  # one pair through each address: one table
            table = address_rows(outcome)
            out += [
                f"### {clock(when)[11:]} {md(units.arrow(outcome.src, outcome.dst))}: "
                f"{len(table) - 1} addresses, one test after another",
                "",
            ]
            out += [_md_table(table[0], table[1:]), ""]
            out += [f"- **{md(c.code)}**: {md(c.message)} ({md(c.evidence)})" for c in outcome.causes] or [
                "no address differs from the others"
            ]
            out.append("")
            continue
        rep = report(outcome)
        out += [f"### {clock(when)[11:]} {md(rep.title)} — {md(rep.status.upper())}", "", md(rep.summary), ""]
        if rep.rows:
            out += [_md_table(("", ""), list(rep.rows)), ""]
        out += [f"- **{md(code)}**: {md(message)} ({md(evidence)})" for code, message, evidence in rep.causes]
        out.append("")
    if not outcomes:
        out += ["no test was run while recording", ""]
    hosts, cells = _matrix(outcomes)
    if cells:
        rows = [
            (src, *(matrix_cell(cells[(src, dst)])[0] if (src, dst) in cells else "—" for dst in hosts))
            for src in hosts
        ]
        out += ["## All-pairs matrix (row: sender, column: receiver)", "", _md_table(("", *hosts), rows), ""]
    return "\n".join(out)
