"""``ip -j route show default`` (and ``ip -j -6 route show default``) on Linux.

A JSON list of routes: ``{"dst": "default", "gateway": "10.77.0.1", "dev": "v0", "metric": 200,
"flags": []}``; metric is absent when it is 0. A multipath default has no ``dev`` of its own
but ``nexthops``, each with a ``dev``. ``unreachable``/``blackhole``/``prohibit`` defaults
(``"type"``) leave by no interface. Several defaults of one family: the kernel uses the lowest
metric, so only those are returned.
"""

from __future__ import annotations

import json
from typing import Any

from ..core.model import IfaceRecord
from . import numbers
from .default_route import DefaultRoute, as_records, word
from .parse_error import ParseError
from .registry import Entry

COMMAND = "ip -j route show default"


def parse_routes(text: str, os_name: str = "linux") -> list[DefaultRoute]:
    if not text.strip():
        return []  # no default route of this family
    try:
        doc = json.loads(text, strict=False)
    except (ValueError, RecursionError) as exc:
        raise ParseError(COMMAND, f"not JSON ({type(exc).__name__})", text.strip().splitlines()[0]) from None
    if not isinstance(doc, list):
        raise ParseError(COMMAND, f"expected a JSON list of routes, got {type(doc).__name__}")
    best: list[DefaultRoute] = []
    best_metric: int | None = None
    for route in doc:
        if not isinstance(route, dict):
            raise ParseError(COMMAND, f"a route is {type(route).__name__}, not an object")
        if route.get("type", "unicast") != "unicast" or route.get("dst") != "default":
            continue
        metric = numbers.json_integer(route.get("metric", 0), "the metric", COMMAND)
        hops = route.get("nexthops", [route])
        if not isinstance(hops, list) or not all(isinstance(h, dict) for h in hops):
            raise ParseError(COMMAND, "nexthops is not a list of objects")
        found = [_route(hop) for hop in hops if "dev" in hop]
        if not found:
            continue
        if best_metric is None or metric < best_metric:
            best, best_metric = found, metric
        elif metric == best_metric:
            best.extend(found)
    return best


def _route(hop: dict[str, Any]) -> DefaultRoute:
    dev, gateway = hop["dev"], hop.get("gateway")
    if not isinstance(dev, str):
        raise ParseError(COMMAND, f"dev is {type(dev).__name__}, not a name")
    if gateway is not None and not isinstance(gateway, str):
        raise ParseError(COMMAND, f"gateway is {type(gateway).__name__}, not an address")
    shown = json.dumps(hop)[:120]
    return DefaultRoute(
        word(dev, "interface", COMMAND, shown), word(gateway, "gateway", COMMAND, shown) if gateway else None
    )


def _records(text: str, os_name: str = "linux") -> list[IfaceRecord]:
    return as_records(parse_routes(text, os_name))


COMMANDS = (
    Entry(
        r"ip -j(?: -6| -4)? route(?: show| list)? default",
        frozenset({"linux"}),
        _records,
        "the interface that carries the default route",
    ),
)
