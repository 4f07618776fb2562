"""Window rules over counters: errors and drops rising, NIC-level drops (with the ring size to
try), and a link that keeps going down and up."""

from __future__ import annotations

from typing import Container, Iterable

from ..core.codes import Code
from ..core.levels import Severity
from ..core.model import Finding
from ..core.units import per_second
from ..settings.config import Thresholds
from .helpers import Port
from .window import History

Watched = Iterable[tuple[Port, History]]

# One down and one up: the kernel counts each transition (Linux carrier_changes).
FLAP_TRANSITIONS = 2

# A rate finding, once raised, holds until its rate falls to this share of the threshold: a
# rate that sits at the threshold would otherwise raise and clear it every few seconds, each
# time with a new "since".
CLEAR_SHARE = 0.5

# The findings raised on the last pass, as (code, host, interface): what holds below the
# threshold until it falls under CLEAR_SHARE of it.
Held = Container[tuple[str, str, str | None]]


def _bar(port: Port, code: Code, threshold: float, held: Held) -> float:
    """The rate above which ``code`` stands on ``port``: the threshold to rise, a share of it
    to stay."""
    return threshold * CLEAR_SHARE if (code, port.host, port.iface.name) in held else threshold


def _rate_finding(
    port: Port, hist: History, code: Code, what: str, threshold: float, window_s: float, held: Held
) -> Finding | None:
    if not hist.any_positive(f"{what}_ps") or not hist.full:
        return None  # the common case, answered without a pass over the window
    mean, peak = hist.mean(f"{what}_ps")
    bar = _bar(port, code, threshold, held)
    if mean is None or mean <= 0 or mean <= bar:
        return None
    rx, _ = hist.mean(f"rx_{what}_ps")
    tx, _ = hist.mean(f"tx_{what}_ps")
    name = port.iface.name
    if what == "errors":
        severity = Severity.ERROR
        hint = errors_hint(port, rx or 0.0, tx or 0.0)
    else:
        severity = Severity.WARNING
        hint = drops_hint(port, rx or 0.0, tx or 0.0)
    holding = f"; raised above it, held until it falls below {bar:g}/s" if mean <= threshold else ""
    return Finding(
        code=code,
        severity=severity,
        host=port.host,
        interface=name,
        message=f"{name}: {what} rising, {per_second(mean)}/s",
        evidence=f"mean {per_second(mean)}/s over the last {hist.span_s:.0f} s (rx {per_second(rx)}/s, "
        f"tx {per_second(tx)}/s, peak {per_second(peak)}/s); threshold {threshold:g}/s over {window_s:g} s{holding}",
        hint=hint,
    )


def errors_hint(port: Port, rx: float, tx: float) -> str:
    """Where to look, for the direction the errors were counted in and the host's OS: receive
    errors are frames damaged on the way in (the cable, the transceiver, the far end's port),
    transmit errors frames this host failed to send (lost carrier, collisions of a duplex
    mismatch, a transmit FIFO underrun, the driver)."""
    fam = port.family
    parts = []
    if rx > 0:
        parts.append(
            "receive errors are frames that arrived damaged (crc, frame, length): swap the cable or transceiver, try "
            "another switch port, and check duplex on both ends" + (_kind(port, fam.rx_errors) if fam else "")
        )
    if tx > 0:
        parts.append(
            "transmit errors are frames this host failed to send: lost carrier, late collisions (a duplex mismatch: "
            "compare both ends' duplex), a transmit FIFO underrun or the driver, not damage on the wire"
            + (_kind(port, fam.tx_errors) if fam else "")
        )
    return "; ".join(parts) or "errors are frames the interface could not receive or send"


def _kind(port: Port, templates: tuple[str, ...]) -> str:
    if not templates:
        return ""
    return f"; {_commands(port, templates)} {'name' if len(templates) > 1 else 'names'} the kind"


def drops_hint(port: Port, rx: float, tx: float) -> str:
    """Where to look, for the direction the drops were counted in and the host's OS: receive
    drops in the rings and the backlog, transmit drops in the queue, the transmit ring and the
    path (a hop that takes less than the host sends)."""
    fam = port.family
    parts = []
    if rx > 0:
        parts.append(
            "receive drops are frames the host discarded on arrival: a full receive ring or backlog, an unknown "
            "protocol or VLAN, or a filter" + (f"; see {_commands(port, fam.rx_drops)}" if fam else "")
        )
    if tx > 0:
        parts.append(
            "transmit drops are frames the host could not send: a full queue (qdisc) or transmit ring, or a path "
            "that takes less than it sends" + (f"; see {_commands(port, fam.tx_drops)}" if fam else "")
        )
    return "; ".join(parts) or "drops are frames the host discarded"


def errors_rising(watched: Watched, thresholds: Thresholds, held: Held = ()) -> list[Finding]:
    found = (
        _rate_finding(p, h, Code.ERRORS_RISING, "errors", thresholds.errors_per_s, thresholds.window_s, held)
        for p, h in watched
    )
    return [f for f in found if f is not None]


def drops_rising(watched: Watched, thresholds: Thresholds, held: Held = ()) -> list[Finding]:
    found = (
        _rate_finding(p, h, Code.DROPS_RISING, "drops", thresholds.drops_per_s, thresholds.window_s, held)
        for p, h in watched
    )
    return [f for f in found if f is not None]


def suggested_ring(now: int | None, maximum: int | None) -> int | None:
    """The RX ring size to try next: four times the current one, capped at the maximum;
    None when there is no room or no figure."""
    if now is None or maximum is None or now >= maximum:
        return None
    return min(maximum, now * 4)


def _commands(port: Port, templates: tuple[str, ...]) -> str:
    return " and ".join(f"`{port.command(t)}`" for t in templates)


def _ring_hint(port: Port) -> tuple[str, str]:
    """(what the ring is now, what to try next)."""
    iface = port.iface
    fam = port.family
    if iface.ring_rx is None or iface.ring_rx_max is None:
        if fam and fam.ring_show and fam.ring_set:
            return (
                "RX ring size unknown",
                f"`{port.command(fam.ring_show)}` shows the ring and its maximum; "
                f"raise it with `{port.command(fam.ring_set, size='N')}`",
            )
        return "RX ring size unknown", "raise the driver's receive descriptor (ring) count"
    ring = f"RX ring {iface.ring_rx} of {iface.ring_rx_max}"
    size = suggested_ring(iface.ring_rx, iface.ring_rx_max)
    if size is None:
        queues = f"`{port.command(fam.queues_set)}`" if fam and fam.queues_set else "more receive queues"
        return ring, (
            "the RX ring is already at its maximum: "
            f"spread the load over more queues ({queues}) or find what keeps the CPU from draining it"
        )
    step = (
        f"`{port.command(fam.ring_set, size=size)}`"
        if fam and fam.ring_set
        else f"raise the driver's receive ring to {size} descriptors"
    )
    return ring, f"try a larger RX ring: {step}, then watch whether the counter stops"


def nic_drops(watched: Watched, thresholds: Thresholds, held: Held = ()) -> list[Finding]:
    out = []
    for port, hist in watched:
        rises = hist.nic_increases()
        total = sum(rises.values())
        if total <= 0 or not hist.full or hist.span_s <= 0:
            continue
        rate = total / hist.span_s
        if rate <= _bar(port, Code.NIC_DROPS, thresholds.drops_per_s, held):
            continue
        ring, step = _ring_hint(port)
        counted = ", ".join(f"{k} +{v}" for k, v in sorted(rises.items(), key=lambda kv: -kv[1]))
        out.append(
            Finding(
                code=Code.NIC_DROPS,
                severity=Severity.WARNING,
                host=port.host,
                interface=port.iface.name,
                message=f"{port.iface.name}: the NIC is dropping received frames ({per_second(rate)}/s), {ring}",
                evidence=f"{counted} in the last {hist.span_s:.0f} s ({per_second(rate)}/s); {ring}",
                hint=step,
            )
        )
    return out


def link_flapping(watched: Watched, thresholds: Thresholds) -> list[Finding]:
    out = []
    for port, hist in watched:
        changes = hist.link_transitions()
        if changes < FLAP_TRANSITIONS:
            continue
        bounces = changes // 2
        out.append(
            Finding(
                code=Code.LINK_FLAPPING,
                severity=Severity.ERROR if bounces >= 2 else Severity.WARNING,
                host=port.host,
                interface=port.iface.name,
                message=f"{port.iface.name}: link went down and up {bounces}× in {hist.span_s:.0f} s",
                evidence=(
                    f"{changes} carrier changes in the last {hist.span_s:.0f} s (window {thresholds.window_s:g} s)"
                ),
                hint="a link that bounces is a loose or damaged cable, a failing transceiver, or a switch port "
                "with power saving (EEE) or errdisable: reseat or swap the cable, check the switch log",
            )
        )
    return out
