"""ifconfig on the BSD family and macOS, from the real captures in tests/fixtures/."""

from __future__ import annotations

import pytest

from linkdeck.core.model import with_real_speed
from linkdeck.parsers import registry
from linkdeck.parsers.ifconfig_bsd import parse
from linkdeck.parsers.parse_error import ParseError
from tests.corpus import by_name, fixture


def test_freebsd14_virtio_claims_10g_but_speed_is_unknown():
    recs = by_name(parse(fixture("freebsd/ifconfig-a__ohai-freebsd14-spec.txt")))
    assert list(recs) == ["vtnet0", "lo0"]
    vtnet0 = recs["vtnet0"]
    assert vtnet0.kind == "virtual" and vtnet0.oper == "up" and vtnet0.mtu == 1500
    # The parser reports what the media line says; the one speed rule (kinds.speed_is_real)
    # then drops it, as every adapter and `linkdeck parse` apply it.
    assert (vtnet0.speed_mbps, vtnet0.duplex) == (10000, "full")
    assert (with_real_speed(vtnet0).speed_mbps, with_real_speed(vtnet0).duplex) == (None, None)
    assert dict(vtnet0.extra)["media"] == "Ethernet autoselect (10Gbase-T <full-duplex>)"
    assert vtnet0.mac == "fa:16:3e:ba:3e:25"
    assert vtnet0.addresses == (
        "140.211.10.91/26",  # netmask 0xffffffc0
        "fe80::f816:3eff:feba:3e25/64",  # %vtnet0 scope dropped
        "2605:bc80:3010:506:f816:3eff:feba:3e25/64",
    )
    lo0 = recs["lo0"]
    assert lo0.kind == "loopback" and lo0.mtu == 16384 and "127.0.0.1/8" in lo0.addresses


def test_freebsd14_lo1_without_ipv4():
    recs = by_name(parse(fixture("freebsd/ifconfig-a__ohai-freebsd14-spec-lo1.txt")))
    assert recs["lo1"].kind == "loopback"
    assert recs["lo1"].addresses == ("fe80::1/64", "::1/128")
    assert dict(recs["lo1"].extra)["groups"] == "lo"


def test_freebsd_salt_negotiated_gigabit_no_carrier_and_point_to_point():
    recs = by_name(parse(fixture("freebsd/ifconfig-a__salt-test-network-freebsd.txt")))
    em0 = recs["em0"]
    assert (em0.kind, em0.oper, em0.speed_mbps, em0.duplex) == ("physical", "up", 1000, "full")
    assert em0.addresses == ("10.10.10.250/27", "10.10.10.56/26")
    em1 = recs["em1"]
    assert (em1.oper, em1.speed_mbps, em1.duplex) == ("down", None, None)  # no UP flag, no carrier
    assert recs["plip0"].oper == "down" and recs["plip0"].mtu == 1500
    tun0 = recs["tun0"]
    assert tun0.kind == "tunnel" and tun0.addresses == ("10.12.0.1/32",)


def test_freebsd15_epair_fixed_media_is_virtual():
    (epair,) = parse(fixture("freebsd/ifconfig-epair-in-jail__blog-rediscovering-freebsd-15.txt"))
    assert epair.name == "epair40b" and epair.kind == "virtual"
    # 'Ethernet 10Gbase-T (10Gbase-T <full-duplex>)' is made up by the epair driver
    assert epair.speed_mbps == 10000 and with_real_speed(epair).speed_mbps is None
    assert epair.addresses == ("10.163.0.40/24",) and epair.mtu == 1500


def test_freebsd15_lagg_members_and_proto():
    (lagg,) = parse(fixture("freebsd/ifconfig-lagg0__blog-rediscovering-freebsd-15.txt"))
    assert lagg.kind == "bond" and lagg.members == ("ixl0", "ixl1")
    assert dict(lagg.extra)["laggproto"] == "lacp"
    assert lagg.mac == "00:25:90:a9:39:8a"  # ether, not the all-zero hwaddr
    assert lagg.speed_mbps is None and lagg.oper == "up"  # 'media: Ethernet autoselect'


def test_freebsd15_vlan_parent():
    (vlan,) = parse(fixture("freebsd/ifconfig-vlan__blog-rediscovering-freebsd-15.txt"))
    assert vlan.name == "vlan163" and vlan.kind == "vlan"
    assert vlan.over == "bridge0" and dict(vlan.extra)["vlan"] == "163"
    assert vlan.mtu == 1496 and vlan.oper == "up" and vlan.addresses == ("10.12.13.14/26",)


def test_freebsd12_fused_hwaddr_and_fixed_media_line():
    (cxl3,) = parse(fixture("freebsd/ifconfig__jc-freebsd12-extra-fields-cxl3.txt"))
    assert cxl3.speed_mbps == 10000 and cxl3.duplex == "full"
    assert cxl3.mac == "00:07:43:3d:b7:70" and dict(cxl3.extra)["hwaddr"] == "00:07:43:3d:b7:88"
    assert cxl3.kind == "physical"


def test_freebsd12_pause_flags_inside_brackets():
    (ix0,) = parse(fixture("freebsd/ifconfig__jc-freebsd12-extra-fields2-ix0.txt"))
    assert (ix0.mtu, ix0.speed_mbps, ix0.duplex, ix0.oper) == (9000, 10000, "full", "up")
    assert ix0.addresses == ("10.10.2.101/24",)


def test_freebsd12_no_media_line():
    (cxl3,) = parse(fixture("freebsd/ifconfig__jc-freebsd12-extra-fields3-cxl3-nomedia.txt"))
    assert cxl3.oper == "up" and cxl3.speed_mbps is None and cxl3.duplex is None


def test_opnsense_verbose_lagg_with_lacp_tuples():
    (lagg,) = parse(fixture("opnsense/ifconfig-v-lagg0__checkmk-opnsense-agent-pr-59-partial.txt"))
    assert lagg.members == ("ice0", "ice1") and lagg.kind == "bond"
    assert lagg.addresses == ("fe80::f690:eaff:fe01:25ee/64",)


def test_macos_media_shapes():
    recs = by_name(parse(fixture("macos/ifconfig-a__ohai-darwin-spec.txt")))
    assert recs["en0"].oper == "down" and recs["en0"].speed_mbps is None  # autoselect (none)
    assert recs["fw0"].mac == "a4:b1:97:ff:fe:b9:3a:d4"  # lladdr, 8 bytes
    assert recs["fw0"].speed_mbps is None and recs["fw0"].duplex is None  # autoselect <full-duplex>
    assert recs["en1"].oper == "up" and recs["en1"].speed_mbps is None  # autoselect, nothing active
    assert recs["gif0"].oper == "down" and recs["stf0"].mtu == 1280
    assert "2001:44b8:4186:1100:7dba:7a60:97a:e14a/64" in recs["en1"].addresses


def test_macos_mojave_tabs_bridge_members_unknown_media():
    recs = by_name(parse(fixture("macos/ifconfig__jc-osx-10.14.6.txt")))
    bridge = recs["bridge0"]
    assert bridge.kind == "bridge" and bridge.members == ("en1", "en2", "en3", "en4")
    assert bridge.oper == "down" and bridge.speed_mbps is None  # media: <unknown type>
    assert recs["en0"].addresses[1] == "192.168.1.72/24"  # trailing spaces after addresses
    assert recs["XHC20"].mtu is None and recs["XHC20"].oper == "down"
    assert recs["utun0"].kind == "tunnel" and recs["utun0"].mtu == 2000
    assert recs["awdl0"].kind == "virtual"


def test_netbsd71_media_without_angle_brackets():
    recs = by_name(parse(fixture("netbsd/ifconfig-a__ansible-netbsd-7.1.txt")))
    re0 = recs["re0"]
    assert (re0.speed_mbps, re0.duplex, re0.oper, re0.mtu) == (100, "full", "up", 1500)
    assert re0.mac == "52:54:00:63:55:af"  # 'address:' line
    assert re0.addresses[0] == "192.168.122.205/24"
    assert recs["lo0"].mtu == 33624


def test_netbsd_post71_cidr_addresses_and_hex_flags():
    recs = by_name(parse(fixture("netbsd/ifconfig-a__ansible-netbsd-post-7.1.txt")))
    assert recs["lo0"].addresses == ("127.0.0.1/8", "::1/128", "fe80::1/64")
    assert recs["re0"].addresses == (
        "192.168.122.205/24",
        "fe80::5054:ff:fe63:55af/64",
        "2001:db8:cafe:da1:5054:ff:fe63:55af/64",
    )
    assert recs["re0"].speed_mbps == 100


def test_netbsd_virtio_without_media():
    recs = by_name(parse(fixture("netbsd/ifconfig-a__salt-test-network-netbsd.txt")))
    vioif = recs["vioif0"]
    assert vioif.kind == "virtual" and vioif.speed_mbps is None and vioif.oper == "up"
    assert vioif.addresses == ("192.168.1.80/24", "fe80::2a0:98ff:fee6:8318/64")


def test_supported_media_lines():
    # Not a capture: the corpus has no `ifconfig -m` output. The lines follow the shape
    # FreeBSD's ifconfig(8) prints under 'supported media:' (NetBSD prints the same
    # 'media X [mediaopt Y]' lines), so the parser's handling of them is pinned here.
    text = (
        "igb0: flags=8843<UP,BROADCAST,RUNNING,SIMPLEX,MULTICAST> metric 0 mtu 1500\n"
        "\tmedia: Ethernet autoselect (100baseTX <full-duplex>)\n"
        "\tstatus: active\n"
        "\tsupported media:\n"
        "\t\tmedia autoselect\n"
        "\t\tmedia 1000baseT mediaopt full-duplex\n"
        "\t\tmedia 100baseTX mediaopt full-duplex\n"
        "\t\tmedia 10baseT/UTP\n"
    )
    (igb0,) = parse(text)
    assert igb0.supported_speeds_mbps == (10, 100, 1000)
    assert igb0.speed_mbps == 100  # negotiated below what the NIC supports: seed 001


def test_macos_verbose_header_index():
    # Not a capture: macOS `ifconfig -v` appends " index N" to the header (Apple's ifconfig.c
    # prints it after mtu); the BSD adapter matches it to netstat's <Link#N>.
    (en0,) = parse("en0: flags=8863<UP,BROADCAST,SMART,RUNNING,SIMPLEX,MULTICAST> mtu 1500 index 6\n\ttype: Ethernet\n")
    assert dict(en0.extra)["index"] == "6" and en0.mtu == 1500


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "no interfaces"),
        ("\tether 00:11:22:33:44:55\n", "before any interface"),
        ("this is not ifconfig\n", "expected 'NAME: flags="),
        ("em0: flags=8843<UP> mtu 1500\n\tinet 10.0.0.1 netmask 0xzz\n", "IPv4"),
        ("em0: flags=8843<UP> mtu 1500\n\tinet6 zz::1 prefixlen 64\n", "IPv6"),
    ],
)
def test_garbled_input_names_the_problem(text, message):
    with pytest.raises(ParseError, match=message):
        parse(text)


@pytest.mark.parametrize("command", ["ifconfig -a", "ifconfig -m ix0", "ifconfig lagg0", "ifconfig -a -v"])
def test_registry_finds_the_parser(command):
    entry = registry.find("truenas", command)
    assert entry is not None
    (ix0,) = entry.parse(fixture("freebsd/ifconfig__jc-freebsd12-extra-fields2-ix0.txt"), "truenas")
    assert ix0.speed_mbps == 10000


# -- property: arbitrary, truncated and mixed-up output raises ParseError or parses ------------

from hypothesis import given, settings, strategies as st  # noqa: E402

_ALL = [
    "freebsd/ifconfig-a__salt-test-network-freebsd.txt",
    "freebsd/ifconfig__jc-freebsd12-extra-fields-cxl3.txt",
    "freebsd/ifconfig-lagg0__blog-rediscovering-freebsd-15.txt",
    "macos/ifconfig__jc-osx-10.14.6.txt",
    "netbsd/ifconfig-a__ansible-netbsd-post-7.1.txt",
    "opnsense/ifconfig-v-lagg0__checkmk-opnsense-agent-pr-59-partial.txt",
]


def _only_parse_errors(text: str) -> None:
    try:
        records = parse(text)
    except ParseError:
        return
    for rec in records:
        assert rec.name and rec.kind
        assert rec.speed_mbps is None or rec.speed_mbps > 0


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_arbitrary_text_never_raises_anything_else(text):
    _only_parse_errors(text)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(_ALL), st.integers(0, 5000), st.randoms(use_true_random=False))
def test_truncated_and_shuffled_captures_never_raise_anything_else(rel, cut, rnd):
    lines = fixture(rel)[:cut].splitlines()
    _only_parse_errors("\n".join(lines))
    rnd.shuffle(lines)
    _only_parse_errors("\n".join(lines))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "inet",
                "inet6",
                "media:",
                "status:",
                "laggport:",
                "member:",
                "vlan:",
                "hwaddr",
                "ether",
                "netmask",
                "prefixlen",
                "0xffffff00",
                "(",
                ")",
                "<",
                ">",
                "10Gbase-T",
                "1.5Gbase",
                "full-duplex",
                "parent interface:",
                "/",
                "%",
                "::1",
                "10.0.0.1",
            ]
        ),
        max_size=8,
    )
)
def test_keyword_soup_in_an_interface_block(words):
    _only_parse_errors("em0: flags=8843<UP,RUNNING> mtu 1500\n\t" + " ".join(words) + "\n")
