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


class _Block(NamedTuple):
    """Up to _BLOCK of a host's interfaces its totals sum, and their sums: the rate tracker
    hands on an idle link's view as it was, so on a node of hundreds of idle veths only the
    block with the link that moved is summed again."""

    views: tuple[InterfaceView, ...]  # compared by identity
    sums: list[float | None]  # each rate's, in Rates' order; None: not known for any of them


_BLOCK = 64
_last: dict[str, _Summed] = {}
_edges: dict[str, _Edges] = {}
_blocks: dict[str, tuple[_Block, ...]] = {}
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
    edge = tuple(map(views.__getitem__, at))
    kept_blocks = _blocks.get(update.host, ())
    blocks = []
    for n, b in enumerate(range(0, len(edge), _BLOCK)):
        part = edge[b : b + _BLOCK]
        last = kept_blocks[n] if n < len(kept_blocks) else None
        if last is not None and len(last.views) == len(part) and all(map(is_, last.views, part)):
            blocks.append(last)
        else:
            blocks.append(_Block(part, _column_sums(part)))
    _blocks[update.host] = tuple(blocks)
    if len(blocks) == 1:
        sums = blocks[0].sums
    elif blocks:
        sums = [_sum(column) for column in zip(*(block.sums for block in blocks))]
    else:
        sums = _column_sums(())
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


def _column_sums(views: tuple[InterfaceView, ...]) -> list[float | None]:
    columns = list(zip(*map(rate_values, views))) or [()] * len(Rates.__dataclass_fields__)
    return [_sum(column) for column in columns]


def _sum(values: tuple[float | None, ...]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None
