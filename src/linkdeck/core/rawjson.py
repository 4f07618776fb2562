"""JSON forms of the raw reads that have no text of their own (the local adapter's psutil and
netlink reads), for recordings: lists and dicts only, defaults left out."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from .kinds import Kind
from .model import COUNTER_FIELDS, Counters, Interface


def counters_to_json(c: Counters) -> list[int | None]:
    return [*(getattr(c, name) for name in COUNTER_FIELDS), c.bits]


def counters_from_json(values: list[Any]) -> Counters:
    return Counters(**dict(zip((*COUNTER_FIELDS, "bits"), values)))


# Fields JSON gives back as lists: the tuples of plain values (``extra``'s pairs are rebuilt below).
_TUPLE_FIELDS = tuple(f.name for f in fields(Interface) if str(f.type).startswith("tuple[") and f.name != "extra")


def interface_to_json(iface: Interface) -> dict[str, Any]:
    out = {}
    for f in fields(Interface):
        value = getattr(iface, f.name)
        default = f.default_factory() if callable(f.default_factory) else f.default
        if value != default:
            out[f.name] = dict(value) if f.name == "nic_counters" else value
    return out


def interface_from_json(data: dict[str, Any]) -> Interface:
    values = dict(data)
    for name in _TUPLE_FIELDS:
        if values.get(name) is not None:  # offload is None where the host has no ethtool
            values[name] = tuple(values[name])
    if "extra" in values:
        values["extra"] = tuple((str(k), str(v)) for k, v in values["extra"])
    if "kind" in values:
        values["kind"] = Kind.read(values["kind"])
    return Interface(**values)
