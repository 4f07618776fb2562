"""The keys of a JSON output, each declared once: its name, its JSON Schema type(s), what it
means and how its value comes from the object written.

An output is a tuple of ``Field``s. ``write`` makes the object's JSON from it and ``schema``
the JSON Schema of that object (its ``properties``, ``required`` and no other key), so a key
added to the tuple is in the output and in its schema at once; tests/test_json_schemas.py keeps
each file of docs/schema/ equal to what the tuples give. A nested object or an array of objects
is a field whose ``of`` holds the fields of what its value returns (a nullable one is null when
its value is None; one that is not is written from None too, its fields saying what None is);
an object keyed by names (hosts) is one with ``keyed``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Generic, Iterable, TypeVar

T = TypeVar("T")
U = TypeVar("U")
In = TypeVar("In", contravariant=True)  # a field of a base reads any of its kind


@dataclass(frozen=True, slots=True)
class Field(Generic[In]):
    """One key of an object written from an ``In``."""

    key: str
    types: tuple[str, ...]  # JSON Schema types: ("integer", "null"); an object or array of objects: "object"/"array"
    help: str  # what it means: the schema's description
    value: Callable[[In], Any]  # its value for the object written: a JSON value, or what ``of`` reads
    items: str | None = None  # an array's item type, when its items are plain values
    of: tuple[Field[Any], ...] | None = None  # the fields of its value (of each item, for an array)
    digits: int | None = None  # a float value rounded to this many decimals
    when_set: bool = False  # the key is there only when its value is set (a note, an error): not required
    keyed: bool = False  # its value maps names (hosts) to what ``of`` reads: an object keyed by them


def write(obj: T, fields: Iterable[Field[T]]) -> dict[str, Any]:
    """``obj``'s JSON object: every field's key in order, with its value."""
    out: dict[str, Any] = {}
    for f in fields:
        value = f.value(obj)
        if f.when_set and not value:
            continue
        out[f.key] = _json(f, value)
    return out


def _json(f: Field[Any], value: Any) -> Any:
    if f.of is not None and not (value is None and "null" in f.types):
        if f.keyed:
            return {k: write(v, f.of) for k, v in value.items()}
        return [write(v, f.of) for v in value] if "array" in f.types else write(value, f.of)
    if f.digits is not None and isinstance(value, float):
        return round(value, f.digits)
    return value


def schema(fields: Iterable[Field[Any]]) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the objects ``write`` makes from ``fields``."""
    fields = tuple(fields)
    return {
        "type": "object",
        "properties": {f.key: _property(f) for f in fields},
        "required": [f.key for f in fields if not f.when_set],
        "additionalProperties": False,
    }


def _property(f: Field[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"type": f.types[0] if len(f.types) == 1 else list(f.types), "description": f.help}
    if f.items is not None:
        out["items"] = {"type": f.items}
    if f.of is not None:
        inner = schema(f.of)
        if f.keyed:
            out["additionalProperties"] = inner
        elif "array" in f.types:
            out["items"] = inner
        else:
            out.update({k: v for k, v in inner.items() if k != "type"})
    return out


def without(fields: Iterable[Field[T]], *keys: str) -> tuple[Field[T], ...]:
    """``fields`` but those of ``keys``: an output that leaves some of another's out."""
    return tuple(f for f in fields if f.key not in keys)


def through(get: Callable[[T], U], fields: Iterable[Field[U]]) -> tuple[Field[T], ...]:
    """``fields`` read from what ``get`` gives: an output that carries another's keys."""
    return tuple(_through(get, f) for f in fields)


def _through(get: Callable[[T], U], f: Field[U]) -> Field[T]:
    return Field(f.key, f.types, f.help, lambda obj: f.value(get(obj)), f.items, f.of, f.digits, f.when_set, f.keyed)
