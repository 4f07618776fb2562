"""ifconfig -a on Linux (busybox, net-tools), from captures made here in one network namespace
together with `ip -j addr`, so both layouts are checked against what iproute2 said."""

from __future__ import annotations

import pytest

from linkdeck.parsers import ip_link, registry
from linkdeck.parsers.ifconfig_linux import parse
from linkdeck.parsers.parse_error import ParseError
from tests.corpus import by_name, fixture

BUSYBOX = "linux/captured-busybox-ifconfig-a.txt"
NET_TOOLS = "linux/captured-ifconfig-a-net-tools.txt"
IP_J_ADDR = "linux/captured-ip-j-addr-ifconfig-namespace.txt"


@pytest.mark.parametrize("name", [BUSYBOX, NET_TOOLS], ids=["busybox", "net-tools"])
def test_each_layout_gives_what_ip_j_addr_gave_in_the_same_namespace(name: str) -> None:
    got = by_name(parse(fixture(name)))
    want = by_name(ip_link.parse_addr_json(fixture(IP_J_ADDR)))
    assert list(got) == ["a-long-name-15c", "br0", "lo", "tun0", "va", "vb", "vd"]  # ifconfig sorts by name
    assert got.keys() == want.keys()
    for link, rec in got.items():
        assert sorted(rec.addresses) == sorted(want[link].addresses), link
        assert (rec.mac, rec.mtu) == (want[link].mac, want[link].mtu), link


@pytest.mark.parametrize("name", [BUSYBOX, NET_TOOLS], ids=["busybox", "net-tools"])
def test_an_alias_label_is_its_links_address_and_a_tunnel_has_no_mac(name: str) -> None:
    recs = by_name(parse(fixture(name)))
    assert "va:1" not in recs
    assert recs["va"].addresses == ("10.0.0.1/24", "fe80::ff:fe00:a01/64", "fd00::1/64", "10.0.1.1/24")
    assert recs["va"].mac == "02:00:00:00:0a:01" and recs["va"].mtu == 9000  # busybox writes it upper case
    assert recs["tun0"].mac is None and recs["tun0"].addresses == ("10.8.0.1/32",)  # P-t-P, all ones
    assert recs["lo"].mac is None and recs["lo"].addresses == ("127.0.0.1/8", "::1/128")
    assert recs["vd"].addresses == () and recs["br0"].addresses == ("192.168.50.1/23",)


def test_the_registry_reads_linux_ifconfig_with_this_parser_and_bsd_with_its_own() -> None:
    for command in ("ifconfig -a", "ifconfig", "busybox ifconfig -a"):
        entry = registry.find("linux", command)
        assert entry is not None and entry.parse.__module__.endswith("ifconfig_linux"), command
    bsd = registry.find("freebsd", "ifconfig -a")
    assert bsd is not None and bsd.parse.__module__.endswith("ifconfig_bsd")


@pytest.mark.parametrize(
    "text",
    [
        "",
        "          inet addr:10.0.0.1  Mask:255.255.255.0\n",  # a detail before any interface
        "eth0: <BROADCAST,UP> mtu 1500\n",  # neither layout's first line
        "eth0      Link encap:Ethernet  HWaddr 02:00:00:00:00:01\n          inet addr:10.0.0.1  Mask:255.0.255.0\n",
        "eth0: flags=4163<UP>  mtu 1500\n        inet 10.0.0.300  netmask 255.255.255.0\n",
        "eth0: flags=4163<UP>  mtu 1500\n        inet6 fe80::1  scopeid 0x20<link>\n",
    ],
    ids=["empty", "detail-first", "ip-addr-text", "mask-with-a-hole", "bad-address", "inet6-without-prefix"],
)
def test_output_it_cannot_read_is_a_parse_error_with_the_line(text: str) -> None:
    with pytest.raises(ParseError, match="ifconfig -a"):
        parse(text)
