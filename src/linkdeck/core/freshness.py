"""When a host's numbers stop being live.

A host's last rates must never look like traffic once its frames stop coming: from the first
missed frame (or any state but live) its update is *stale*. A stale update keeps its static
facts (MTU, speed, addresses) but its rates and utilisation become unknown, and every output —
the dashboard, ``snapshot``, the findings — asks this module rather than deciding on its own.
"""

from __future__ import annotations

from dataclasses import replace

from .model import HostState, HostUpdate, InterfaceView, Rates
from .tcpstats import TcpRates

# A frame is due every interval; one that has not come within half an interval more (and a
# second for a busy link or host) is missed.
MISSED_FRAME_GRACE_S = 1.0


def fresh_until(received: float, every_s: float) -> float:
    """Until when a sample received at ``received`` (wall clock), with the next one due
    ``every_s`` later, counts as live."""
    return received + 1.5 * every_s + MISSED_FRAME_GRACE_S


def stale_since(update: HostUpdate, now: float) -> float | None:
    """The wall-clock time of the last sample when ``update``'s numbers are stale at ``now``,
    else None (live, or nothing shown yet)."""
    if not update.interfaces or update.received is None:
        return None
    if update.state is HostState.LIVE and (update.fresh_until is None or now <= update.fresh_until):
        return None
    return update.received


def as_seen(update: HostUpdate, now: float) -> HostUpdate:
    """``update`` as it may be shown at ``now``: itself while live; once stale, a copy marked
    ``stale`` whose rates and utilisation are unknown."""
    if update.stale or stale_since(update, now) is None:
        return update
    views = tuple(InterfaceView(iface=v.iface, rates=Rates(), totals=v.totals) for v in update.interfaces)
    tcp = None if update.tcp is None else TcpRates()
    return replace(update, interfaces=views, tcp=tcp, stale=True)
