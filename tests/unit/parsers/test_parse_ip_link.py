"""ip link (JSON and text) and ip -j addr over real captures (tests/fixtures/linux/)."""

import json

import pytest
from hypothesis import given, settings, strategies as st

from linkdeck.parsers import ParseError, registry
from linkdeck.parsers.ip_link import parse_addr_json, parse_json, parse_text, read_addr_json, read_json
from tests.corpus import by_name, fixture

# ---------------------------------------------------------------- JSON


def test_s_s_j_netdev_patch_veth_with_otherhost():
    recs = by_name(parse_json(fixture("linux/ip-s-s-j-link__netdev-list-iproute2-otherhost-patch.txt")))
    assert list(recs) == ["lo", "veth2"]
    lo, veth = recs["lo"], recs["veth2"]
    assert (lo.kind, lo.oper, lo.mtu, lo.mac) == ("loopback", "up", 65536, None)  # UNKNOWN + UP,LOWER_UP
    assert (veth.oper, veth.mtu, veth.mac) == ("up", 1500, "8e:c0:a5:7d:87:ad")
    c = veth.counters
    assert (c.rx_bytes, c.rx_packets, c.tx_bytes, c.tx_packets, c.bits) == (2116, 27, 1406, 17, 64)
    assert veth.nic_counters["rx_otherhost"] == 10
    assert veth.carrier_changes == 2
    assert veth.over is None  # peer in another namespace: link_index only


def test_s_j_captured_namespace_members_over_and_odd_name():
    recs = by_name(parse_json(fixture("linux/captured-ip-s-j-link.txt")))
    assert list(recs) == ["lo", "veth0", "br0", "vpeer2", "v.üm|x", "mv0", "tap0"]
    assert recs["br0"].members == ("veth0", "vpeer2")
    assert dict(recs["veth0"].extra)["master"] == "br0"
    assert recs["br0"].counters.tx_drops == 1
    assert recs["veth0"].counters.tx_bytes == 5140390
    assert recs["v.üm|x"].mtu == 9000
    assert recs["mv0"].over == "br0"
    assert recs["tap0"].oper == "down"
    assert recs["br0"].kind is None  # no -d: the kind is not in the output


def test_d_s_s_j_captured_kinds_from_linkinfo():
    recs = by_name(parse_json(fixture("linux/captured-ip-d-s-s-j-link.txt")))
    kinds = {name: r.kind for name, r in recs.items()}
    assert kinds == {
        "lo": "loopback", "veth0": "virtual", "br0": "bridge", "vpeer2": "virtual",
        "v.üm|x": "virtual", "mv0": "vnic", "tap0": "tunnel",
    }  # fmt: skip
    # A veth's "link" is its peer, not something it sits on.
    assert recs["vpeer2"].over is None and recs["mv0"].over == "br0"
    assert recs["veth0"].carrier_changes == 2
    assert recs["br0"].nic_counters["rx_multicast"] == 8
    assert dict(recs["mv0"].extra)["linkinfo kind"] == "macvlan"


def test_json_bond_master_flag_and_physical_parentbus():
    links = [
        {
            "ifname": "bond0",
            "flags": ["BROADCAST", "MASTER", "UP", "LOWER_UP"],
            "mtu": 9000,
            "operstate": "UP",
            "link_type": "ether",
        },
        {
            "ifname": "eth0",
            "flags": ["UP", "SLAVE"],
            "mtu": 9000,
            "operstate": "UP",
            "master": "bond0",
            "link_type": "ether",
            "parentbus": "pci",
        },
        {
            "ifname": "old0",
            "mtu": 1500,
            "operstate": "DOWN",
            "stats": {"rx": {"bytes": 5, "packets": 1}, "tx": {"bytes": 7, "packets": 2}},
        },
        {},
    ]
    recs = by_name(parse_json(json.dumps(links)))
    assert recs["bond0"].kind == "bond" and recs["bond0"].members == ("eth0",)
    assert recs["eth0"].kind == "physical"
    assert recs["old0"].counters.bits == 32 and recs["old0"].counters.tx_bytes == 7
    assert recs["old0"].counters.rx_errors is None


@pytest.mark.parametrize("text, fragment", [("garbage", "not JSON"), ('{"ifname": "x"}', "expected a JSON list")])
def test_json_garbled(text, fragment):
    with pytest.raises(ParseError) as exc:
        parse_json(text)
    assert fragment in str(exc.value)


@pytest.mark.parametrize(
    "bad, fragment",
    [
        ('{"mtu": 1500}', "without an 'ifname'"),
        ('{"ifname": "e", "mtu": "big"}', "'mtu' is not a non-negative integer"),
        ('{"ifname": "e", "stats64": {"rx": 1, "tx": {}}}', "stats without rx/tx"),
        ('{"ifname": "e", "stats64": {"rx": {"bytes": -4}, "tx": {}}}', "'bytes' is not a non-negative integer"),
        ('{"ifname": "e", "flags": "UP"}', "'flags' is not a list"),
    ],
)
def test_a_garbled_link_costs_that_link_alone_and_is_named(bad, fragment):
    good = '{"ifname": "eth0", "mtu": 9000, "operstate": "UP", "flags": ["UP"]}'
    records, problems = read_json(f"[{good}, {bad}]")
    assert [(r.name, r.mtu, r.oper) for r in records] == [("eth0", 9000, "up")]
    (problem,) = problems
    assert fragment in problem


def test_a_control_character_inside_a_name_is_data_not_a_broken_document():
    # ip prints an interface name's bytes as they are: ESC inside a JSON string (real iproute2
    # behaviour for a name like $'\e[31mRED'; the document around it constructed)
    text = (
        '[{"ifname": "eth0", "mtu": 9000, "addr_info": [{"local": "198.18.77.4", "prefixlen": 24}]}, '
        '{"ifname": "\x1b[31mRED", "mtu": 1500}]'
    )
    records, problems = read_addr_json(text)
    assert problems == []
    assert [(r.name, r.mtu, r.addresses) for r in records] == [
        ("eth0", 9000, ("198.18.77.4/24",)),
        ("\x1b[31mRED", 1500, ()),
    ]


# ---------------------------------------------------------------- text


def test_text_unraid_bond_new_iproute2_layout():
    (rec,) = parse_text(fixture("linux/ip-s-link-show__ha-unraid-issue-13-bond1.txt"))
    assert (rec.name, rec.kind, rec.oper, rec.mtu, rec.mac) == ("bond1", "bond", "up", 9000, "00:60:dd:44:37:62")
    c = rec.counters
    assert (c.rx_bytes, c.rx_packets, c.rx_drops, c.tx_bytes, c.tx_packets, c.tx_drops) == (
        770731719960, 808429036, 185979, 355853126292, 144312808, 1
    )  # fmt: skip
    assert dict(rec.extra)["master"] == "br1"
    assert rec.nic_counters == {"rx_missed": 0, "rx_mcast": 0, "tx_carrier": 0, "tx_collsns": 0}


def test_text_old_iproute2_fixed_width_layout():
    (rec,) = parse_text(fixture("linux/ip-s-link__iproute2-issue-22-lo-only.txt"))
    assert (rec.name, rec.kind, rec.oper, rec.mtu) == ("lo", "loopback", "up", 65536)
    assert (rec.counters.rx_bytes, rec.counters.rx_packets, rec.counters.tx_bytes) == (100, 2, 100)
    assert rec.nic_counters["rx_overrun"] == 0


def test_text_captured_namespace_peer_names_and_members():
    recs = by_name(parse_text(fixture("linux/captured-ip-s-link.txt")))
    assert list(recs) == ["lo", "veth0", "br0", "vpeer2", "v.üm|x", "mv0", "tap0"]
    assert recs["veth0"].over is None  # "veth0@if2": peer in another namespace
    # "vpeer2@v.üm|x" and "v.üm|x@vpeer2": the two ends of a veth pair, neither runs over the
    # other (issue 10.6: a veth was indented under its peer)
    assert recs["vpeer2"].over is None and recs["v.üm|x"].over is None
    assert recs["mv0"].over == "br0"
    assert recs["br0"].members == ("veth0", "vpeer2")
    assert recs["br0"].counters.tx_drops == 1 and recs["br0"].nic_counters["rx_mcast"] == 8
    assert recs["tap0"].oper == "down" and recs["v.üm|x"].mtu == 9000


def test_text_s_s_error_blocks_go_to_nic_counters():
    recs = by_name(parse_text(fixture("linux/captured-ip-s-s-link.txt")))
    assert recs["veth0"].nic_counters["tx_transns"] == 2
    assert recs["veth0"].nic_counters["rx_crc"] == 0
    assert recs["veth0"].counters.tx_bytes == 5140390


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("", "no link found"),
        ("hello\n", "expected 'N: NAME: <FLAGS>"),
        ("1: lo: <UP> mtu 65536\n    RX: bytes packets\n", "stats header without values"),
        ("1: lo: <UP> mtu 65536\n    RX: bytes packets\n    12\n", "2 numbers expected"),
        ("1: lo: <UP> mtu big\n", "mtu is not a number"),
    ],
)
def test_text_garbled(text, fragment):
    with pytest.raises(ParseError) as exc:
        parse_text(text)
    assert fragment in str(exc.value)


# ---------------------------------------------------------------- ip -j addr


def test_addr_json_captured():
    recs = by_name(parse_addr_json(fixture("linux/captured-ip-j-addr.txt")))
    assert recs["lo"].addresses == ("127.0.0.1/8", "::1/128")
    assert recs["br0"].addresses == ("192.0.2.1/24", "2001:db8::1/64", "fe80::3c85:8dff:fecd:4d6e/64")
    assert recs["mv0"].addresses[0] == "198.51.100.1/25"
    assert recs["tap0"].addresses == ()
    assert recs["br0"].members == ("veth0", "vpeer2") and recs["br0"].mtu == 1500
    # ip -j addr has no -d kind: the veth pair is told by each end naming the other
    assert recs["vpeer2"].over is None and recs["v.üm|x"].over is None and recs["mv0"].over == "br0"


def test_addr_json_garbled():
    records, (problem,) = read_addr_json('[{"ifname": "e", "addr_info": [1]}, {"ifname": "f", "mtu": 1500}]')
    assert "addr_info entry is not an object" in problem and [r.name for r in records] == ["f"]


# ---------------------------------------------------------------- registry


@pytest.mark.parametrize(
    "command, parser",
    [
        ("ip -s -j link", "json"), ("ip -s -s -j link show", "json"), ("ip -d -s -j link show dev eth0", "json"),
        ("ip -j -s link", "json"), ("ip -s link", "text"), ("ip -s link show bond1", "text"),
        ("ip -s -s link", "text"), ("ip -j addr", "addr"), ("ip -j address show", "addr"),
    ],
)  # fmt: skip
def test_registry_routes_by_json_flag(command, parser):
    entry = registry.find("linux", command)
    assert entry is not None
    text = {"json": "captured-ip-s-j-link.txt", "text": "captured-ip-s-link.txt", "addr": "captured-ip-j-addr.txt"}[
        parser
    ]
    recs = by_name(entry.parse(fixture(f"linux/{text}"), "linux"))
    assert recs["veth0"].counters is None if parser == "addr" else recs["veth0"].counters.tx_bytes == 5140390
    assert registry.find("freebsd", command) is None


# ---------------------------------------------------------------- one bad field, one link

_JSONW_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _as_ip_prints(raw: bytes) -> str:
    """A string as iproute2's json writer prints it: quotes, backslashes and five control
    characters escaped, every other byte as it is (read back with undecodable bytes replaced)."""
    return '"' + "".join(_JSONW_ESCAPES.get(c, c) for c in raw.decode("utf-8", errors="replace")) + '"'


def _link(name: str, mtu_value: int, ip: str, **raw: str) -> str:
    fields = {
        "ifname": _as_ip_prints(name.encode()),
        "mtu": str(mtu_value),
        "operstate": '"UP"',
        "flags": '["BROADCAST","UP","LOWER_UP"]',
        "link_type": '"ether"',
        "address": '"02:00:00:00:00:01"',
        "addr_info": f'[{{"family":"inet","local":"{ip}","prefixlen":24}}]',
    }
    fields.update(raw)
    return "{" + ",".join(f'"{k}":{v}' for k, v in fields.items()) + "}"


@settings(max_examples=300, deadline=None)
@given(
    which=st.integers(0, 2),
    field=st.sampled_from(["ifname", "operstate", "address", "link_type", "mtu", "flags", "addr_info"]),
    raw=st.binary(max_size=40),
    other=st.sampled_from(['"big"', "-1", "1.5", "null", "[]", "{}", '"\\u0000"', "true"]),
)
def test_any_bytes_in_one_link_leave_every_other_link_whole(which, field, raw, other):
    names = ["eth0", "eth1", "eth2"]
    good = [_link(n, 9000 - i, f"198.18.77.{i + 1}") for i, n in enumerate(names)]
    want = {r.name: r for r in parse_addr_json("[" + ",".join(good) + "]")}
    value = _as_ip_prints(raw) if field in ("ifname", "operstate", "address", "link_type") else other
    bad = list(good)
    bad[which] = _link(names[which], 9000 - which, f"198.18.77.{which + 1}", **{field: value})
    records, _ = read_addr_json("[" + ",".join(bad) + "]")
    got = {r.name: r for r in records}
    for i, name in enumerate(names):
        if i != which:
            assert got[name] == want[name]
