"""ipadm show-addr over real captures."""

import pytest

from linkdeck.parsers import ParseError, registry
from linkdeck.parsers.ipadm import parse_show_addr
from tests.corpus import fixture


def run(command: str, rel: str):
    entry = registry.find("illumos", command)
    assert entry is not None
    return {r.name: r for r in entry.parse(fixture(rel), "illumos")}


def test_parseable_escaped_ipv6_colons():
    recs = run(
        "ipadm show-addr -p -o addrobj,addr", "illumos/ipadm-show-addr-p-o-addrobj-addr__conch-reporter-smartos.txt"
    )
    assert recs["lo0"].addresses == ("127.0.0.1/8", "::1/128")
    assert recs["ixgbe3"].addresses == ("10.65.245.20/24",)
    assert recs["external0"].addresses == ("10.65.246.20/24",)


def test_seed003_addrobj_underscore_a():
    recs = run("ipadm show-addr", "illumos/ipadm-show-addr__i40e-investigation.txt")
    assert recs["aggr0"].addresses == ("172.30.115.32/24",)
    assert recs["admin0"].addresses == ("172.30.115.36/24",)
    assert recs["admin1"].addresses == ("172.30.115.47/24",)
    assert recs["lo0"].addresses == ("127.0.0.1/8", "::1/128")


def test_dhcp_type():
    recs = run("ipadm show-addr", "illumos/ipadm-show-addr-dhcp__openindiana-guide.txt")
    assert recs["e1000g0"].addresses == ("10.0.2.15/24",)
    assert recs["e1000g0"].extra == (("dhcp", "10.0.2.15/24"),)
    assert recs["lo0"].extra == ()


def test_o_all_extra_columns():
    recs = run(
        "ipadm show-addr -o all pxebooter0/v4", "illumos/ipadm-show-addr-o-all__blog-rediscovering-freebsd-omnios.txt"
    )
    assert recs["pxebooter0"].addresses == ("100.64.0.253/24",)


def test_question_mark_address_and_point_to_point():
    text = (
        "ADDROBJ           TYPE     STATE        ADDR\nnet0/v4           dhcp     ok           ?\n"
        "ip.tun0/v4        static   ok           10.1.0.1->10.1.0.2\n"
    )
    recs = {r.name: r for r in parse_show_addr(text)}
    assert recs["net0"].addresses == ()
    assert recs["ip.tun0"].addresses == ("10.1.0.1",)


def test_addrobj_without_slash_is_a_parse_error():
    with pytest.raises(ParseError, match="not <interface>/<name>"):
        parse_show_addr("lo0:127.0.0.1/8\n", "illumos", ("addrobj", "addr"))
