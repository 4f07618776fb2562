"""A host's traffic as one interface's: what its host row and the host columns show."""

from __future__ import annotations

from operator import attrgetter, is_
from typing import NamedTuple

from .kinds import VIRTUAL_KINDS, Kind
from .model import Counters, HostUpdate, Interface, InterfaceView, Rates, rate_values
from .order import nest

_NOT_IN_TOTALS = VIRTUAL_KINDS | {Kind.LOOPBACK}  # a host's totals leave them out unless it has nothing else


class _Summed(NamedTuple):
    """A host's last update and its totals: a row is drawn again (scrolled, a unit toggled,
    another host's sample) far more often than its host sends a sample, and summing a node's
    hundreds of interfaces was most of what an idle dashboard did."""

    update: HostUpdate  # compared by identity
    totals: InterfaceView | None


class _Edges(NamedTuple):
    """A host's interfaces and the positions of those its totals sum: the rate tracker keeps
    each Interface while its facts do not change, so a new sample of the same interfaces sums
    the same ones without nesting a node's hundreds of interfaces again."""

    ifaces: tuple[Interface, ...]  # compared by identity
    at: tuple[int, ...]


_last: dict[str, _Summed] = {}
_edges: dict[str, _Edges] = {}
_IFACE = attrgetter("iface")


def host_totals(update: HostUpdate) -> InterfaceView | None:
    """The host's traffic as one interface's: the sum over its top-level interfaces (not a bond's
    ports or a vlan under its link: those are counted in what they sit under), loopback and
    virtual ones left out unless it has no other (a VM's only NIC may be a vtnet). None while
    no rate is known (a stale host). Summed once per update of the host."""
    cached = _last.get(update.host)
    if cached is not None and cached.update is update:
        return cached.totals
    totals = _sum_totals(update)
    _last[update.host] = _Summed(update, totals)
    return totals


def _sum_totals(update: HostUpdate) -> InterfaceView | None:
    views = update.interfaces
    ifaces = tuple(map(_IFACE, views))
    kept = _edges.get(update.host)
    if kept is not None and len(kept.ifaces) == len(ifaces) and all(map(is_, kept.ifaces, ifaces)):
        at = kept.at
    else:
        at = _edge_positions(views)
        _edges[update.host] = _Edges(ifaces, at)
    edge = [views[i] for i in at]
    columns = list(zip(*(rate_values(v) for v in edge))) or [()] * len(Rates.__dataclass_fields__)
    sums = [_sum(column) for column in columns]
    if sums[0] is None and sums[1] is None:  # rx_bps, tx_bps: no rate known
        return None
    return InterfaceView(Interface(name=update.host, kind=Kind.HOST), Rates(*sums), Counters())


def _edge_positions(views: tuple[InterfaceView, ...]) -> tuple[int, ...]:
    """Where the interfaces the totals sum are: the top-level ones (not a bond's ports or a vlan
    under its link), loopback left out, virtual ones too unless there is nothing else."""
    top = [v for v in nest(views).get(None, ()) if v.iface.kind != Kind.LOOPBACK]
    edge = [v for v in top if v.iface.kind not in _NOT_IN_TOTALS] or top
    at = {id(v): i for i, v in enumerate(views)}
    return tuple(at[id(v)] for v in edge)


def _sum(values: tuple[float | None, ...]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None
