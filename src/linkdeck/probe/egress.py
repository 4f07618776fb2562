"""Which interface a test goes through: the binding that asks for the chosen one, and the
counters that show which one carried it.

On Linux (the weak host model) ``iperf3 -B ADDR`` picks the source address, not the
interface: with two interfaces in one subnet the route still sends by the first.
``--bind-dev IF`` (iperf3 3.10 and later, Linux) does pick it. Whatever was asked, the
counters read around the test are what say where the traffic went.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from ..core.codes import Code
from ..core.model import Cause, Counters
from .iperf import Iperf3Info

# An interface other than the chosen one carried the test when it moved this many times
# more bytes than the chosen one: two legs' background chatter never does.
CARRIED_RATIO = 4.0


@dataclass(frozen=True, slots=True)
class Binding:
    """What the client is told to send from: ``address`` (-B), ``dev`` (--bind-dev), and
    ``limit``, why that cannot guarantee the interface (None when it can, or when nothing
    was chosen)."""

    address: str | None = None
    dev: str | None = None
    limit: str | None = None

    @property
    def options(self) -> tuple[str | None, str | None]:
        return self.address, self.dev


def binding(host: str, os: str | None, info: Iperf3Info, ifname: str | None, own: str | None) -> Binding:
    """How the client on ``host`` sends from ``ifname``, whose address toward the peer is
    ``own`` (nothing when no interface was chosen)."""
    if ifname is None:
        return Binding()
    if os in (None, "linux") and info.bind_dev:
        return Binding(own, ifname)
    why = (
        f"iperf3 {info.label} on {host} has no --bind-dev (3.10 and later)"
        if os in (None, "linux")
        else f"iperf3 on {host} ({os}) binds to an address, not an interface"
    )
    return Binding(
        own, None, f"{why}: -B {own} picks the source address; the route picks the interface" if own else why
    )


def carrier(
    before: Mapping[str, Counters] | None,
    after: Mapping[str, Counters] | None,
    chosen: str | None,
    field: str,
    carried: float | None,
) -> str | None:
    """The interface whose counters show it carried the test's forward direction instead of
    ``chosen`` (``field``: "tx_bytes" at the sender, "rx_bytes" at the receiver), or None when
    ``chosen`` did (or the counters cannot say). The reverse direction may come back by
    another interface than the forward leaves by: the forward one names the end. ``carried``:
    the bytes iperf3 moved forward; an interface that moved under half of them did not carry
    the test, however quiet the chosen one was (a direction that moved next to nothing); a
    chosen one that moved half of them or more did, however busy another one was."""
    if not before or not after or chosen is None:
        return None
    moved = {name: _bytes(before[name], after[name], field) for name in after if name in before}
    if chosen not in moved or not moved:
        return None
    busiest = max(moved, key=lambda n: moved[n])
    if carried is None or moved[busiest] < carried / 2:
        return None
    # Every byte iperf3 moved crossed the interface that carried it, so a chosen interface that
    # counted as much carried it, however much another transfer moved on a busier one.
    if moved[chosen] >= carried / 2:
        return None
    if busiest != chosen and moved[busiest] > CARRIED_RATIO * max(moved[chosen], 1):
        return busiest
    return None


def _bytes(before: Counters, after: Counters, field: str) -> int:
    old, new = getattr(before, field, None), getattr(after, field, None)
    return new - old if isinstance(old, int) and isinstance(new, int) and new >= old else 0


def routed_elsewhere(host: str, chosen: str, used: str, address: str, sending: bool, limit: str | None) -> Cause:
    """The cause that heads a verdict judged on another interface than the one chosen."""
    verb = "sent through" if sending else "received on"
    why = f"the route to {address} leaves by {used}" if sending else f"{address}'s traffic arrived by {used}"
    message = f"{verb} {used}, not {chosen}: {why}"
    evidence = f"{host} {used}'s counters carried the test, {chosen}'s next to nothing; judged on {used}"
    if limit:
        evidence += f" ({limit})"
    return Cause(Code.ROUTED_ELSEWHERE, message, evidence)
