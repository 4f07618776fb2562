"""Headless output of host updates: the JSON documented in docs/JSON.md, and a plain table."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Iterable

from ..core import units
from ..core.cells import NAME, configured_note, drops_ps, errors_ps, host_cells, json_fields, plain_header, plain_row
from ..core.jsonfields import Field, write
from ..core.model import FINDING_JSON, Finding, HostState, HostUpdate, InterfaceView
from ..core.order import tree
from ..core.tcpstats import TCP_RATES_JSON, TcpRates
from ..present.outcome import stale_note, state_word


def interface_json(view: InterfaceView) -> dict:
    """An interface's object: every key the column registry gives (cells.json_fields), a
    measured figure rounded to its field's digits."""
    return write(view, json_fields())


@dataclass(frozen=True, slots=True)
class _Seen:
    """A host's update as printed at ``now``."""

    update: HostUpdate
    now: float


@dataclass(frozen=True, slots=True)
class _Snapshot:
    hosts: tuple[_Seen, ...]
    findings: tuple[Finding, ...]
    own: tuple[float, float] | None


def _age_s(s: _Seen) -> float | None:
    return None if s.update.received is None else max(0.0, s.now - s.update.received)


_SELF_JSON: tuple[Field[tuple[float, float] | None], ...] = (
    Field(
        "cpu_pct",
        ("number", "null"),
        "linkdeck's own CPU, % of one core over the command's life; null in snapshot --from",
        lambda own: own[0] if own else None,
        digits=1,
    ),
    Field(
        "rss_mb",
        ("number", "null"),
        "linkdeck's resident memory, MB; null in snapshot --from",
        lambda own: own[1] if own else None,
        digits=1,
    ),
)
_COLLECTION_JSON: tuple[Field[_Seen], ...] = (
    Field(
        "remote_cpu_ms_per_sample",
        ("number", "null"),
        "the sampler's CPU on the host per sample, ms; null where the host does not report it",
        lambda s: s.update.remote_cpu_ms,
        digits=2,
    ),
    Field(
        "bytes_per_sample",
        ("integer", "null"),
        "the last sample's size as it came over the wire; null for this machine's own reads",
        lambda s: s.update.wire_bytes,
    ),
    Field(
        "sample_age_ms",
        ("integer", "null"),
        "how old the last sample was when printed, ms; null when none came",
        lambda s: None if (age := _age_s(s)) is None else round(age * 1000),
    ),
)


def snapshot_fields() -> tuple[Field[_Snapshot], ...]:
    """The keys of snapshot --json, its hosts' and their interfaces' (read from the column
    registry when called: cells.json_fields)."""
    host: tuple[Field[_Seen], ...] = (
        Field("name", ("string",), "the host as named", lambda s: s.update.host),
        Field("os", ("string", "null"), "its OS as detected; null before it is", lambda s: s.update.os),
        Field("os_detail", ("string", "null"), "its OS's release, where told", lambda s: s.update.os_detail),
        Field(
            "state",
            ("string",),
            "connecting, live, reconnecting, auth failed, host key unknown, host key changed, unreachable or error",
            lambda s: s.update.state.value,
        ),
        Field("error", ("string", "null"), "why it is not live and what to do next", lambda s: s.update.error),
        Field(
            "detail",
            ("object",),
            "what more there is to say of it (a host key's fingerprint, the transport, what its samples miss): "
            "a string for each field of HostDetail said",
            lambda s: s.update.detail.as_json(),
        ),
        Field(
            "reached_at",
            ("string", "null"),
            "the host's own address linkdeck's SSH session came in on; null when there is none",
            lambda s: s.update.reached_at,
        ),
        Field(
            "stale",
            ("boolean",),
            "its last sample is no longer live: its rates are null, its facts those of last_sample_age_s ago",
            # no live numbers: whatever is shown is old
            lambda s: s.update.stale or s.update.state is not HostState.LIVE,
        ),
        Field(
            "last_sample_age_s",
            ("number", "null"),
            "seconds since its last sample came; null when none came",
            _age_s,
            digits=1,
        ),
        Field("collection", ("object",), "what watching the host costs", lambda s: s, of=_COLLECTION_JSON),
        Field(
            "tcp",
            ("object",),
            "its TCP health over the last interval; every key always there, null where the OS (or this moment) "
            "does not tell",
            lambda s: s.update.tcp or TcpRates(),
            of=TCP_RATES_JSON,
        ),
        Field(
            "interfaces",
            ("array",),
            "its interfaces, each bond's or aggr's members under it",
            lambda s: [v for _, v in tree(s.update.interfaces)],
            of=json_fields(),
        ),
    )
    return (
        Field("self", ("object",), "what linkdeck itself costs", lambda d: d.own, of=_SELF_JSON),
        Field("hosts", ("array",), "every host watched, in order", lambda d: d.hosts, of=host),
        Field("findings", ("array",), "the findings up now", lambda d: d.findings, of=FINDING_JSON),
    )


def snapshot_json(
    updates: Iterable[HostUpdate],
    findings: Iterable[Finding] = (),
    now: float | None = None,
    own: tuple[float, float] | None = None,
) -> dict:
    """``own``: linkdeck's own (CPU % of one core, RSS in MB) when known."""
    now = time.time() if now is None else now
    return write(_Snapshot(tuple(_Seen(u, now) for u in updates), tuple(findings), own), snapshot_fields())


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
