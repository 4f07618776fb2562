import json

import pytest

from linkdeck.core.kinds import Kind, guess_kind
from linkdeck.core.model import KINDS, Interface
from linkdeck.core.rawjson import interface_from_json, interface_to_json


@pytest.mark.parametrize("kind", list(Kind))
def test_a_kind_prints_compares_and_dumps_as_its_word(kind):
    word = kind.value
    assert kind == word and word == kind and hash(kind) == hash(word)
    assert str(kind) == f"{kind}" == "{}".format(kind) == "%s" % kind == word
    assert f"{kind:>12}" == f"{word:>12}"
    assert json.dumps({kind: kind}) == json.dumps({word: word})
    assert word in {kind} and kind in {word}  # sets and dicts keyed by words or members agree


def test_kinds_are_the_words_a_parser_may_give():
    assert [str(k) for k in KINDS] == [
        "loopback",
        "physical",
        "virtual",
        "bridge",
        "vlan",
        "bond",
        "vnic",
        "tunnel",
        "wireless",
        "unknown",
    ]
    assert Kind.HOST not in KINDS  # a host's totals row only


@pytest.mark.parametrize(("name", "kind"), [("lo0", Kind.LOOPBACK), ("vlan12", Kind.VLAN), ("em0", Kind.UNKNOWN)])
def test_guess_kind_gives_members(name, kind):
    assert guess_kind(name) is kind


def test_a_recorded_kind_reads_back_as_its_member():
    iface = Interface("bond0", kind=Kind.BOND)
    data = json.loads(json.dumps(interface_to_json(iface)))
    assert data == {"name": "bond0", "kind": "bond"}
    back = interface_from_json(data)
    assert back == iface and back.kind is Kind.BOND


@pytest.mark.parametrize("word", ["infiniband", "", 7, None, ["bond"]])
def test_a_kind_this_version_does_not_know_reads_as_unknown(word):
    # a recording from another version, or a hand-edited one, must not fail to load
    assert Kind.read(word) is Kind.UNKNOWN
    assert interface_from_json({"name": "ib0", "kind": word}).kind is Kind.UNKNOWN
