"""The field registry every JSON output is written from: one declaration makes the object and
its schema (constructed objects)."""

from __future__ import annotations

from dataclasses import dataclass

import jsonschema
import pytest

from linkdeck.core.jsonfields import Field, schema, through, without, write


@dataclass
class Leg:
    name: str
    mbps: float | None


@dataclass
class Trip:
    who: str
    legs: tuple[Leg, ...]
    note: str | None
    by_host: dict[str, Leg]
    first: Leg | None


LEG = (
    Field("name", ("string",), "its name", lambda leg: leg.name),
    Field("mbps", ("number", "null"), "its rate", lambda leg: leg.mbps, digits=1),
)
TRIP = (
    Field("who", ("string",), "who went", lambda t: t.who),
    Field("legs", ("array",), "each leg", lambda t: t.legs, of=LEG),
    Field("note", ("string",), "a note, only when there is one", lambda t: t.note, when_set=True),
    Field("by_host", ("object",), "each leg by host", lambda t: t.by_host, of=LEG, keyed=True),
    Field("first", ("object", "null"), "the first leg", lambda t: t.first, of=LEG),
    Field("tags", ("array",), "its tags", lambda t: ["a"], items="string"),
)


def a_trip(note: str | None = None, first: Leg | None = None) -> Trip:
    return Trip("ann", (Leg("x", 1.26), Leg("y", None)), note, {"h1": Leg("z", 3)}, first)


def test_write_keeps_the_declared_order_rounds_and_nests():
    got = write(a_trip(), TRIP)
    assert list(got) == ["who", "legs", "by_host", "first", "tags"]  # no note: not set
    assert got["legs"] == [{"name": "x", "mbps": 1.3}, {"name": "y", "mbps": None}]
    assert got["by_host"] == {"h1": {"name": "z", "mbps": 3}}  # an int is not turned into a float
    assert got["first"] is None  # a nullable object with no value
    assert write(a_trip("late", Leg("w", 2.0)), TRIP)["note"] == "late"


def test_an_object_that_is_not_nullable_is_written_from_none_by_its_fields():
    maybe = (Field("mbps", ("number", "null"), "", lambda leg: leg.mbps if leg else None),)
    holder = (Field("leg", ("object",), "", lambda t: t.first, of=maybe),)
    assert write(a_trip(), holder) == {"leg": {"mbps": None}}


def test_the_schema_says_every_key_and_validates_what_write_makes():
    s = schema(TRIP)
    assert list(s["properties"]) == [f.key for f in TRIP]
    assert s["required"] == ["who", "legs", "by_host", "first", "tags"] and s["additionalProperties"] is False
    assert s["properties"]["legs"]["items"]["properties"]["mbps"] == {
        "type": ["number", "null"],
        "description": "its rate",
    }
    assert s["properties"]["by_host"]["additionalProperties"]["required"] == ["name", "mbps"]
    assert s["properties"]["tags"]["items"] == {"type": "string"}
    for trip in (a_trip(), a_trip("late", Leg("w", 2.0))):
        jsonschema.validate(write(trip, TRIP), s, cls=jsonschema.Draft202012Validator)
    with pytest.raises(jsonschema.ValidationError):  # a key no field declares is not in the schema
        jsonschema.validate({**write(a_trip(), TRIP), "extra": 1}, s, cls=jsonschema.Draft202012Validator)


def test_one_output_carries_anothers_keys():
    legs = through(lambda t: t.legs[0], LEG)
    assert write(a_trip(), legs) == {"name": "x", "mbps": 1.3}
    assert [f.key for f in without(TRIP, "legs", "tags")] == ["who", "note", "by_host", "first"]
