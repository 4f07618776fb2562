"""Headless output of host updates: the JSON documented in docs/JSON.md, and a plain table."""

from __future__ import annotations

import time
from typing import Iterable

from ..core import units
from ..core.cells import NAME, configured_note, drops_ps, errors_ps, host_cells, json_fields, plain_header, plain_row
from ..core.jsonfields import write
from ..core.model import Finding, HostState, HostUpdate, InterfaceView
from ..core.order import tree
from ..core.tcpstats import TcpRates
from ..present.outcome import stale_note, state_word


def interface_json(view: InterfaceView) -> dict:
    """An interface's object: every key the column registry gives (cells.json_fields), a
    measured figure rounded to its field's digits."""
    return write(view, json_fields())


def _round(value: float | None, digits: int = 1) -> float | None:
    return None if value is None else round(value, digits)


def snapshot_json(
    updates: Iterable[HostUpdate],
    findings: Iterable[Finding] = (),
    now: float | None = None,
    own: tuple[float, float] | None = None,
) -> dict:
    """``own``: linkdeck's own (CPU % of one core, RSS in MB) when known."""
    now = time.time() if now is None else now
    return {
        "self": {"cpu_pct": _round(own[0]) if own else None, "rss_mb": _round(own[1]) if own else None},
        "hosts": [
            {
                "name": u.host,
                "os": u.os,
                "os_detail": u.os_detail,
                "state": u.state.value,
                "error": u.error,
                "detail": u.detail.as_json(),
                "reached_at": u.reached_at,
                "stale": u.stale or u.state is not HostState.LIVE,  # no live numbers: whatever is shown is old
                "last_sample_age_s": None if u.received is None else _round(max(0.0, now - u.received)),
                "collection": {
                    "remote_cpu_ms_per_sample": _round(u.remote_cpu_ms, 2),
                    "bytes_per_sample": u.wire_bytes,
                    "sample_age_ms": None if u.received is None else round(max(0.0, now - u.received) * 1000),
                },
                # every key always there, null where the OS (or this moment) does not tell
                "tcp": (u.tcp or TcpRates()).to_json(),
                "interfaces": [interface_json(v) for _, v in tree(u.interfaces)],
            }
            for u in updates
        ],
        "findings": [f.as_dict() for f in findings],
    }


def _host_head(u: HostUpdate, in_bytes: bool) -> list[str]:
    """A host's line (name, OS, state, error, host cells) and, when its samples lack something,
    a line saying what and why, as the host screen does."""
    head = f"{units.printable(u.host)}  [{u.os or '?'}]  {state_word(u)}"
    if u.error:
        head += f"  — {units.printable(u.error)}"
    if u.detail.fingerprint:
        head += f"  (key {u.detail.fingerprint})"
    if stale_note(u):
        head += f"  ({stale_note(u)})"
    head += "".join(f"  {c.plain[0] if c.plain else c.title} {text}" for c, text in host_cells(u, in_bytes))
    missing = [f"  missing: {units.printable('; '.join(u.detail.missing))}"] if u.detail.missing else []
    return [head, *missing]


def snapshot_table(
    updates: Iterable[HostUpdate],
    findings: Iterable[Finding] = (),
    in_bytes: bool = False,
    window_s: float | None = None,
) -> str:
    lines: list[str] = []
    updates = list(updates)
    for u in updates:
        lines += _host_head(u, in_bytes)
        rows = [(*NAME.plain, *plain_header())]
        for depth, v in tree(u.interfaces):
            name = "  " * depth + ("*" if v.iface.default_route else "") + units.printable(v.iface.name)
            rows.append((name, *plain_row(v, in_bytes)))
        if len(rows) > 1:
            widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
            for row in rows:
                lines.append("  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
        lines.append("")
    note = configured_note(v.iface for u in updates for v in u.interfaces)
    if note:
        lines += [note, ""]
    findings = list(findings)
    if findings:
        lines.append("Findings:")
        for f in findings:
            where = f"{f.host}/{f.interface}" if f.interface else f.host
            lines.append(f"  [{f.severity.value}] {f.code} {units.printable(where)}: {f.message}")
            lines.append(f"      evidence: {f.evidence}")
            lines.append(f"      next: {f.hint}")
    counting = any(errors_ps(v) or drops_ps(v) for u in updates for v in u.interfaces)
    if counting and window_s:
        lines.append(
            f"Errors or drops above are over one interval; ERRORS_RISING, DROPS_RISING and NIC_DROPS judge "
            f"{window_s:g} s of samples: watch them with `linkdeck`."
        )
    return "\n".join(lines).rstrip() + "\n"
