"""The subnet rules read an interface's IPv4 addresses by integer arithmetic (the fleet at
10,000 hosts reads 80,000 of them on a findings pass); it must agree with ipaddress, through
addresses.routable, on every text, routable or not."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from linkdeck.findings import helpers as common

OCTET = st.one_of(st.integers(0, 300), st.sampled_from([0, 10, 127, 169, 172, 192, 254, 255, 256]))
PREFIX = st.one_of(st.integers(0, 40), st.sampled_from(["08", "00", "032", ""]))
TEXT = st.one_of(
    st.builds(lambda a, b, c, d, p: f"{a}.{b}.{c}.{d}/{p}", OCTET, OCTET, OCTET, OCTET, PREFIX),
    st.builds(lambda a, b, c, d, p: f"{a:03d}.{b}.{c}.{d}/{p}", OCTET, OCTET, OCTET, OCTET, PREFIX),
    st.sampled_from(
        ["fe80::1%eth0/64", "2001:db8::1/64", "::1/128", "10.1.2.3", "garbage", "1.2.3.4/32", "169.254.9.9/16"]
    ),
)


def _reference(addresses: tuple[str, ...]) -> tuple:
    return tuple(dict.fromkeys((n.version, int(n.network_address), n.prefixlen) for n in common._networks(addresses)))


@settings(max_examples=400, deadline=None)
@given(st.lists(TEXT, max_size=4))
def test_subnet_keys_agree_with_ipaddress(texts) -> None:
    addresses = tuple(texts)
    assert common._keyed_networks(addresses) == _reference(addresses)


def test_the_subnets_of_a_fleet_group_as_before() -> None:
    iface = type(
        "I", (), {"addresses": ("10.1.2.3/24", "10.1.2.4/24", "2001:db8::1/64", "127.0.0.1/8", "1.2.3.4/32")}
    )()
    assert [str(n) for n in common.networks(iface)] == ["10.1.2.0/24", "2001:db8::/64"]
