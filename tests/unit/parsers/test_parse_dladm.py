"""dladm parsers over real captures (tests/fixtures/{illumos,solaris,seeds}/, 4-line header)."""

import pytest

from linkdeck.parsers import ParseError, registry
from linkdeck.parsers.dladm import (
    SHOW_LINK_FIELDS,
    SHOW_VNIC_FIELDS,
    parse_show_aggr,
    parse_show_link,
    parse_show_linkprop,
    parse_show_phys,
    parse_show_vnic,
)
from linkdeck.parsers.dladm_rows import split_parseable
from tests.corpus import FIXTURES, by_name, fixture


def run(os_name: str, command: str, rel: str):
    entry = registry.find(os_name, command)
    assert entry is not None, command
    return by_name(entry.parse(fixture(rel), os_name))


# ---------------------------------------------------------------- show-link


def test_show_link_parseable_smartos_vnic_state_question_mark():
    recs = run(
        "smartos",
        "dladm show-link -p -o link,class,mtu,state",
        "illumos/dladm-show-link-p-o-link-class-mtu-state__conch-reporter-smartos.txt",
    )
    assert list(recs) == ["igb0", "ixgbe0", "external0", "net0", "net1"]
    assert (recs["igb0"].kind, recs["igb0"].oper, recs["igb0"].mtu) == ("physical", "down", 1500)
    assert (recs["external0"].kind, recs["external0"].oper) == ("vnic", "up")
    assert recs["net0"].kind == "vnic" and recs["net0"].oper is None  # '?' means unknown


def test_show_link_illumos_bridge_column_vnic_over_aggr():
    recs = run(
        "omnios", "dladm show-link pxebooter0", "illumos/dladm-show-link-vnic__blog-rediscovering-freebsd-omnios.txt"
    )
    assert recs["pxebooter0"].kind == "vnic"
    assert recs["pxebooter0"].over == "aggr0"
    assert recs["pxebooter0"].mtu == 1500 and recs["pxebooter0"].extra == ()


def test_show_link_omnios_bhyve():
    recs = run("omnios", "dladm show-link", "illumos/dladm-show-link__omnios-bhyve-migrate-doc.txt")
    assert (recs["vioif1"].kind, recs["vioif1"].oper, recs["vioif1"].mtu, recs["vioif1"].over) == (
        "physical",
        "up",
        1500,
        None,
    )


def test_show_link_solaris11_without_bridge_column_topology():
    recs = run("solaris", "dladm show-link", "solaris/dladm-show-link__opensvc-lag-solaris11-aggr-vnic.txt")
    assert len(recs) == 9
    assert recs["aggrbck0"].kind == "bond" and recs["aggrbck0"].members == ("net1",) and recs["aggrbck0"].over is None
    assert recs["aggrpriv0"].members == ("net3",)
    assert (recs["bckg0"].kind, recs["bckg0"].over) == ("vnic", "aggrbck0")
    assert recs["zrac3_p_a0"].over == "aggrpriv0"
    assert recs["net4"].over is None and recs["net4"].members == ()


def test_show_link_solaris112_states():
    recs = run("solaris", "dladm show-link", "solaris/dladm-show-link__oracle-docs-solaris112.txt")
    assert recs["net1"].oper == "down"
    assert recs["net3"].oper is None and recs["net2"].oper is None  # "unknown"
    assert recs["net11"].oper == "up" and recs["net11"].mtu == 1500


def test_show_link_parseable_aggr_over_lists_ports_comma_separated():
    text = "aggr0:aggr:9000:up:i40e0,i40e1,i40e2,i40e3\nadmin0:vnic:1500:up:aggr0\ni40e0:phys:9000:up:\n"
    recs = by_name(parse_show_link(text, "illumos", SHOW_LINK_FIELDS))
    assert recs["aggr0"].members == ("i40e0", "i40e1", "i40e2", "i40e3")
    assert recs["aggr0"].mtu == 9000
    assert recs["admin0"].over == "aggr0"
    assert recs["i40e0"].over is None


def test_show_link_parseable_wrong_field_count_names_command_and_line():
    with pytest.raises(ParseError, match=r"dladm show-link -p -o link,class,mtu,state,over: expected 5"):
        parse_show_link("igb0:phys:1500\n", "illumos", SHOW_LINK_FIELDS)


def test_show_link_garbled_mtu():
    with pytest.raises(ParseError, match="the value is not a number: 'jumbo'"):
        parse_show_link("igb0:phys:jumbo:up:\n", "illumos", SHOW_LINK_FIELDS)


# ---------------------------------------------------------------- show-phys


def test_show_phys_smartos_headnode_down_igb_speed_zero_is_unknown():
    recs = run("smartos", "dladm show-phys", "illumos/dladm-show-phys__conch-reporter-smartos-headnode.txt")
    assert len(recs) == 6
    igb0 = recs["igb0"]
    assert (igb0.oper, igb0.speed_mbps, igb0.duplex, igb0.driver) == ("down", None, None, "igb")
    ix = recs["ixgbe3"]
    assert (ix.kind, ix.oper, ix.speed_mbps, ix.duplex, ix.driver) == ("physical", "up", 10000, "full", "ixgbe")
    assert ("media", "Ethernet") in ix.extra


def test_show_phys_openindiana_unknown_and_question_mark_states():
    recs = run("openindiana", "dladm show-phys", "illumos/dladm-show-phys-state-question-mark__openindiana-guide.txt")
    assert (recs["e1000g0"].oper, recs["e1000g0"].speed_mbps, recs["e1000g0"].duplex) == (None, None, None)
    assert (recs["e1000g1"].oper, recs["e1000g1"].speed_mbps, recs["e1000g1"].duplex) == (None, 1000, "full")


def test_show_phys_omnios_bhyve():
    recs = run("omnios", "dladm show-phys", "illumos/dladm-show-phys__omnios-bhyve-migrate-doc.txt")
    assert (recs["vioif0"].speed_mbps, recs["vioif0"].duplex, recs["vioif0"].driver) == (1000, "full", "vioif")


def test_show_phys_parseable_four_fields():
    recs = run(
        "smartos",
        "dladm show-phys -p -o link,state,speed,duplex",
        "illumos/dladm-show-phys-p-o-link-state-speed-duplex__conch-reporter-smartos.txt",
    )
    assert (recs["igb0"].oper, recs["igb0"].speed_mbps, recs["igb0"].duplex) == ("down", None, None)
    assert (recs["ixgbe0"].oper, recs["ixgbe0"].speed_mbps, recs["ixgbe0"].duplex) == ("up", 10000, "full")


def test_show_phys_parseable_six_fields_and_media_with_space():
    text = "i40e0:Ethernet:up:10000:full:i40e0\nath0:IEEE 802.11:up:54:half:ath0\n"
    recs = by_name(parse_show_phys(text, "illumos", ("link", "media", "state", "speed", "duplex", "device")))
    assert (recs["i40e0"].speed_mbps, recs["i40e0"].driver) == (10000, "i40e")
    assert ("media", "IEEE 802.11") in recs["ath0"].extra
    plain = (
        "LINK         MEDIA                STATE      SPEED  DUPLEX    DEVICE\n"
        "ath0         IEEE 802.11          up         54     half      ath0\n"
    )
    assert parse_show_phys(plain)[0].extra[0] == ("media", "IEEE 802.11")


def test_show_phys_mac_parseable_escaped_colons():
    recs = run(
        "smartos",
        "dladm show-phys -m -p -o link,address",
        "illumos/dladm-show-phys-m-p-o-link-address__conch-reporter-smartos.txt",
    )
    assert recs["igb0"].mac == "24:6e:96:24:2f:5c"
    assert recs["ixgbe3"].mac == "24:6e:96:24:2f:5a"


def test_show_phys_mac_table():
    recs = run("smartos", "dladm show-phys -m", "illumos/dladm-show-phys-m__conch-reporter-smartos-headnode.txt")
    assert len(recs) == 6
    assert recs["ixgbe0"].mac == "a0:36:9f:c0:fb:b8"
    assert recs["igb1"].mac == "24:6e:96:24:2f:5d"


def test_split_parseable_unescapes():
    assert split_parseable(r"igb0:24\:6e\:96\:24\:2f\:5c") == ["igb0", "24:6e:96:24:2f:5c"]
    assert split_parseable(r"a\\b:c") == ["a\\b", "c"]
    assert split_parseable("aggr0::x") == ["aggr0", "", "x"]


# ---------------------------------------------------------------- show-aggr


def test_show_aggr_L_seed003_four_i40e_ports():
    recs = run("smartos", "dladm show-aggr -L", "illumos/dladm-show-aggr-L__i40e-investigation-4port.txt")
    assert recs["aggr0"].kind == "bond"
    assert recs["aggr0"].members == ("i40e0", "i40e1", "i40e2", "i40e3")
    assert recs["i40e3"].kind == "physical"


def test_show_aggr_L_omnios_two_ixgbe():
    recs = run("omnios", "dladm show-aggr aggr0 -L", "illumos/dladm-show-aggr-L__blog-rediscovering-freebsd-omnios.txt")
    assert recs["aggr0"].members == ("ixgbe0", "ixgbe1")


def test_show_aggr_parseable_L_continuation_rows_have_empty_link():
    # illumos prints LINK only on an aggregation's first port row; '-p' leaves it empty after.
    text = "aggr0:i40e0\n:i40e1\naggr1:ixgbe0\n:ixgbe1\n"
    recs = by_name(parse_show_aggr(text, "illumos", ("link", "port")))
    assert recs["aggr0"].members == ("i40e0", "i40e1")
    assert recs["aggr1"].members == ("ixgbe0", "ixgbe1")
    with pytest.raises(ParseError, match="port row before any aggregation"):
        parse_show_aggr(":i40e1\n", "illumos", ("link", "port"))


def test_show_aggr_x_blank_link_column_port_speeds():
    recs = run("omnios", "dladm show-aggr aggr0 -x", "illumos/dladm-show-aggr-x__blog-rediscovering-freebsd-omnios.txt")
    aggr = recs["aggr0"]
    assert (aggr.members, aggr.speed_mbps, aggr.duplex, aggr.oper, aggr.mac) == (
        ("ixgbe0", "ixgbe1"),
        1000,
        "full",
        "up",
        "ac:1f:6b:a5:f8:42",
    )
    assert (recs["ixgbe1"].speed_mbps, recs["ixgbe1"].mac) == (1000, "ac:1f:6b:a5:f8:43")
    assert ("portstate", "attached") in recs["ixgbe0"].extra


def test_show_aggr_s_counters_even_when_columns_overflow():
    recs = run("omnios", "dladm show-aggr aggr0 -s", "illumos/dladm-show-aggr-s__blog-rediscovering-freebsd-omnios.txt")
    assert recs["aggr0"].members == ("ixgbe0", "ixgbe1")
    assert recs["aggr0"].counters.rx_bytes == 1644928576672
    assert recs["aggr0"].counters.tx_packets == 20064895095
    assert recs["ixgbe1"].counters.rx_packets == 9514520594
    assert recs["ixgbe1"].counters.tx_bytes == 894210366049


def test_show_aggr_P_and_solaris11_summary():
    recs = run("omnios", "dladm show-aggr aggr0 -P", "illumos/dladm-show-aggr-P__blog-rediscovering-freebsd-omnios.txt")
    assert ("lacpactivity", "active") in recs["aggr0"].extra
    recs = run("solaris", "dladm show-aggr", "solaris/dladm-show-aggr__opensvc-lag-solaris11.txt")
    assert list(recs) == ["aggr0", "aggrbck0", "aggrpriv0"]
    assert all(r.kind == "bond" and r.members == () for r in recs.values())
    assert ("policy", "L4") in recs["aggrpriv0"].extra and ("lacpactivity", "off") in recs["aggrpriv0"].extra


def test_show_aggr_solaris10_key_layout():
    recs = run("solaris", "dladm show-aggr", "solaris/dladm-show-aggr-solaris10-format__opensvc-lag.txt")
    assert recs["aggr1"].kind == "bond"
    assert recs["aggr1"].members == ("e1000g0", "bnx0")
    assert recs["aggr1"].mac == "00:15:17:bb:82:d2"
    assert (recs["bnx0"].speed_mbps, recs["bnx0"].duplex, recs["bnx0"].oper, recs["bnx0"].mac) == (
        1000,
        "full",
        "up",
        "00:24:e8:35:61:3b",
    )


# ---------------------------------------------------------------- show-vnic


def test_show_vnic_seed003_speed_is_underlying():
    recs = run("smartos", "dladm show-vnic", "illumos/dladm-show-vnic__i40e-investigation.txt")
    assert set(recs) == {"admin0", "admin1"}
    a0 = recs["admin0"]
    assert (a0.kind, a0.over, a0.speed_mbps, a0.mac, a0.extra) == ("vnic", "aggr0", 10000, "02:08:20:43:4e:9c", ())
    assert recs["admin1"].mac == "02:08:20:33:31:10"


def test_show_vnic_vlan_and_zone():
    recs = run(
        "omnios", "dladm show-vnic pxebooter0", "illumos/dladm-show-vnic__blog-rediscovering-freebsd-omnios-vlan.txt"
    )
    p = recs["pxebooter0"]
    assert (p.over, p.speed_mbps, p.mac) == ("aggr0", 1000, "02:08:20:f4:7d:62")
    assert p.extra == (("vid", "69"), ("zone", "pxebooter"))


def test_show_vnic_parseable_etherstub_speed_zero():
    text = "admin0:aggr0:10000:0:\nstub0vnic:stub0:0:12:zone1\n"
    recs = by_name(parse_show_vnic(text, "illumos", SHOW_VNIC_FIELDS))
    assert recs["admin0"].speed_mbps == 10000 and recs["admin0"].extra == ()
    assert recs["stub0vnic"].speed_mbps is None
    assert recs["stub0vnic"].extra == (("vid", "12"), ("zone", "zone1"))


def test_show_vnic_stats_odd_layout():
    recs = run(
        "omnios", "dladm show-vnic -s pxebooter0", "illumos/dladm-show-vnic-s__blog-rediscovering-freebsd-omnios.txt"
    )
    assert list(recs) == ["pxebooter0"]
    c = recs["pxebooter0"].counters
    assert (c.rx_packets, c.rx_bytes, c.tx_packets, c.tx_bytes) == (16321811, 7879573143, 14054330, 43176235359)


# ---------------------------------------------------------------- show-linkprop


@pytest.mark.parametrize(
    "rel, e1000g0_speed",
    [
        ("seeds/dladm-show-linkprop-speed__seed001-before-fix.txt", 100),
        ("seeds/dladm-show-linkprop-speed__seed001-after-fix.txt", 1000),
    ],
)
def test_show_linkprop_seed001_possible_speeds(rel, e1000g0_speed):
    recs = run("solaris", "dladm show-linkprop -p speed", rel)
    assert recs["e1000g0"].speed_mbps == e1000g0_speed
    assert recs["e1000g0"].supported_speeds_mbps == (10, 100, 1000)
    assert recs["e1000g1"].speed_mbps == 1000


def test_show_linkprop_illumos_perm_column_and_parseable():
    text = (
        "LINK         PROPERTY        PERM VALUE          DEFAULT        POSSIBLE\n"
        "e1000g0      speed           r-   100            --             10,100,1000\n"
        "e1000g0      mtu             rw   9000           1500           1500-9216\n"
        "vioif0       speed           r-   1000           --             --\n"
    )
    recs = parse_show_linkprop(text)
    assert (recs[0].speed_mbps, recs[0].supported_speeds_mbps) == (100, (10, 100, 1000))
    assert recs[1].mtu == 9000
    assert (recs[2].speed_mbps, recs[2].supported_speeds_mbps) == (1000, ())
    parseable = "i40e0:speed:10000:1000,10000,25000\n"
    entry = registry.find("illumos", "dladm show-linkprop -c -o link,property,value,possible -p speed")
    (rec,) = entry.parse(parseable, "illumos")
    assert rec.supported_speeds_mbps == (1000, 10000, 25000)


def test_table_without_link_column_is_a_parse_error():
    with pytest.raises(ParseError, match="no LINK column"):
        parse_show_link("garbage here\nmore garbage\n")


# ---------------------------------------------------------------- robustness (all illumos parsers)

from hypothesis import given, settings, strategies as st  # noqa: E402

_MINE = ("linkdeck.parsers.dladm", "linkdeck.parsers.kstat", "linkdeck.parsers.ipadm")
_ILLUMOS_ENTRIES = [e for e in registry.entries() if getattr(e.parse, "func", e.parse).__module__ in _MINE]
_REAL_LINES = [
    line
    for sub in ("illumos", "solaris", "seeds")
    for path in sorted((FIXTURES / sub).glob("*.txt"))
    if not path.name.startswith("ifconfig")
    for line in fixture(f"{sub}/{path.name}").splitlines()
]


@settings(max_examples=300, deadline=None)
@given(
    entry=st.sampled_from(_ILLUMOS_ENTRIES),
    lines=st.lists(st.one_of(st.sampled_from(_REAL_LINES), st.text(max_size=80)), max_size=12),
    cut=st.integers(min_value=0, max_value=400),
)
def test_mixed_up_and_truncated_output_raises_only_parse_error(entry, lines, cut):
    text = "\n".join(lines)[: cut or None]
    try:
        records = entry.parse(text, "illumos")
    except ParseError as exc:
        assert str(exc)  # names the command
        return
    assert isinstance(records, list)
    for rec in records:
        assert rec.name and not any(ch.isspace() for ch in rec.name)
        assert rec.speed_mbps is None or rec.speed_mbps > 0
