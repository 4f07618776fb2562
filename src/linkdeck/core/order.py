"""The one order of a host's interfaces: each under the bond, aggr or link it sits on, siblings
sorted by a column of ``cells.SORTS`` (by name unless told). The dashboard, its host screen and
``snapshot`` all list interfaces through ``tree`` so a user finds them in the same place."""

from __future__ import annotations

from typing import Callable, Iterable

from .cells import SORTS
from .model import InterfaceView


def sort_key(view: InterfaceView, sort: str = "name") -> tuple[int, float, str]:
    name = view.iface.name
    by = SORTS[sort].value
    if by is None:
        return (0, 0.0, name)
    value = by(view)
    # biggest first, unknown last, name breaks ties so the order is stable tick to tick
    return (1, 0.0, name) if value is None else (0, -value, name)


def nest(views: Iterable[InterfaceView]) -> dict[str | None, list[InterfaceView]]:
    """Children by parent name (None = top level): an interface sits under the one its ``over``
    names, or under the bond/aggr that lists it as a member. Cycles fall back to top level."""
    by_name = {v.iface.name: v for v in views}
    parent: dict[str, str] = {}
    for v in by_name.values():
        for member in v.iface.members:
            if member in by_name and member != v.iface.name:
                parent.setdefault(member, v.iface.name)
    for v in by_name.values():
        if v.iface.over in by_name and v.iface.over != v.iface.name:
            parent[v.iface.name] = v.iface.over
    for name in list(parent):  # an interface on its own path up is in a cycle: top level
        seen, p = set(), parent.get(name)
        while p is not None and p != name and p not in seen:
            seen.add(p)
            p = parent.get(p)
        if p == name:
            del parent[name]
    children: dict[str | None, list[InterfaceView]] = {}
    for name, v in by_name.items():
        children.setdefault(parent.get(name), []).append(v)
    return children


def tree(
    views: Iterable[InterfaceView], sort: str = "name", shown: Callable[[InterfaceView], bool] = lambda v: True
) -> list[tuple[int, InterfaceView]]:
    """(depth, interface) in display order, depth 0 at the top level. An interface is listed
    when ``shown`` or when one of its children is: a vlan that matches keeps its lagg listed."""
    children = nest(views)

    def walk(parent: str | None, depth: int) -> list[tuple[int, InterfaceView]]:
        out: list[tuple[int, InterfaceView]] = []
        for view in sorted(children.get(parent, ()), key=lambda v: sort_key(v, sort)):
            below = walk(view.iface.name, depth + 1)
            if below or shown(view):
                out.append((depth, view))
                out.extend(below)
        return out

    return walk(None, 0)
