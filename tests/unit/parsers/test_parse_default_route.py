"""The default-route parsers (ip -j route, route -n get, netstat -rn) over real captures, and
what they do with output they cannot read."""

import pytest

from linkdeck.parsers import ParseError, registry
from linkdeck.parsers.default_route import DefaultRoute
from linkdeck.parsers.ip_route import parse_routes as ip_route
from linkdeck.parsers.netstat_route import parse_routes as netstat_route
from linkdeck.parsers.route_get import parse_routes as route_get
from tests.corpus import fixture

# -- Linux: ip -j route show default -------------------------------------------------------


def test_linux_one_default():
    assert ip_route(fixture("linux/captured-ip-j-route-show-default.txt")) == [DefaultRoute("v0", "10.77.0.1")]


def test_linux_lowest_metric_wins():
    # v0's default has no metric (0), w0's 200: the kernel sends by v0.
    assert ip_route(fixture("linux/captured-ip-j-route-show-default-metric.txt")) == [DefaultRoute("v0", "10.77.0.1")]


def test_linux_multipath_default_leaves_by_every_nexthop():
    routes = ip_route(fixture("linux/captured-ip-j-route-show-default-multipath.txt"))
    assert routes == [DefaultRoute("v0", "10.77.0.1"), DefaultRoute("w0", "10.78.0.1")]


def test_linux_unreachable_default_and_no_ipv6_default_name_no_interface():
    assert ip_route(fixture("linux/captured-ip-j-route-show-default-unreachable.txt")) == []
    assert ip_route(fixture("linux/captured-ip-j-6-route-show-default-none.txt")) == []
    assert ip_route("") == []  # ip without -j (busybox, iproute2 < 4.13): the sampler drops its error


def test_linux_ipv6_default():
    assert ip_route(fixture("linux/captured-ip-j-6-route-show-default.txt")) == [DefaultRoute("v0", "2001:db8:77::1")]


@pytest.mark.parametrize(
    "text, says",
    [
        ('Option "-j" is unknown, try "ip -help".', "not JSON"),
        ('{"dst": "default"}', "expected a JSON list"),
        ("[1]", "not an object"),
        ('[{"dst": "default", "dev": 7}]', "dev is int"),
        ('[{"dst": "default", "dev": "eth0", "metric": -1}]', "metric"),
        ('[{"dst": "default", "dev": "eth0\\u001b[2J"}]', "not one printable word"),
        ('[{"dst": "default", "nexthops": "eth0"}]', "nexthops"),
        ("[" * 100000, "not JSON"),
    ],
)
def test_linux_hostile_output_is_one_parse_error(text, says):
    with pytest.raises(ParseError, match=says) as err:
        ip_route(text)
    assert "\n" not in str(err.value)


# -- BSD: route -n get default ---------------------------------------------------------------


def test_freebsd_route_get_names_vtnet0_and_its_gateway():
    assert route_get(fixture("freebsd/route-n-get-default__ohai-freebsd14-spec.txt")) == [
        DefaultRoute("vtnet0", "140.211.10.65")
    ]


def test_route_get_without_a_default_prints_nothing_on_stdout():
    assert route_get("") == []


@pytest.mark.parametrize(
    "text, says",
    [
        ("hello world\n", "expected 'field: value' lines"),
        ("  interface: em0\n", "no 'destination:'"),
        ("destination: default\n  interface: em\x1b[31m0 x\n", "not one printable word"),
    ],
)
def test_route_get_hostile_output_is_one_parse_error(text, says):
    with pytest.raises(ParseError, match=says):
        route_get(text)


# -- illumos / Solaris and the BSDs: netstat -rn ---------------------------------------------


def test_solaris_default_on_net0_ipv6_table_has_none():
    assert netstat_route(fixture("solaris/netstat-rn__jackpal-gateway-solaris.txt"), "solaris") == [
        DefaultRoute("net0", "172.16.32.1")
    ]


def test_solaris_default_without_interface_keeps_its_gateway():
    routes = netstat_route(fixture("solaris/netstat-rn-no-interface__jackpal-gateway-solaris.txt"), "solaris")
    assert routes == [DefaultRoute(None, "172.16.32.1"), DefaultRoute(None, "fe80::aabb:ccdd:1234:1")]


def test_freebsd_and_netbsd_netstat_rn():
    assert netstat_route(fixture("freebsd/netstat-rn__jackpal-gateway-evidence-freebsd13.txt"), "freebsd") == [
        DefaultRoute("xn0", "172.31.32.1")
    ]
    assert netstat_route(fixture("netbsd/netstat-rn__jackpal-gateway-evidence-netbsd.txt"), "netbsd") == [
        DefaultRoute("ena0", "172.31.16.1")
    ]


def test_illumos_logical_interface_is_its_link():
    text = fixture("solaris/netstat-rn__jackpal-gateway-solaris.txt").replace("76419 net0", "76419 net0:1")
    assert netstat_route(text, "omnios") == [DefaultRoute("net0", "172.16.32.1")]


@pytest.mark.parametrize(
    "text, says",
    [
        ("default 10.0.0.1 UG 1 2 e1000g0\n", "before any column header"),
        ("Destination Gateway Use\n", "without Flags"),
        ("Destination Gateway Flags Netif\ndefault 10.0.0.1\n", "fewer than the header"),
        ("Destination Gateway Flags Netif\ndefault 10.0.0.1 UG " + "x" * 70 + "\n", "not one printable word"),
    ],
)
def test_netstat_route_hostile_output_is_one_parse_error(text, says):
    with pytest.raises(ParseError, match=says):
        netstat_route(text, "illumos")


# -- the registry, for `linkdeck parse` ------------------------------------------------------


@pytest.mark.parametrize(
    "os_name, command, rel, name, gateway",
    [
        ("linux", "ip -j route show default", "linux/captured-ip-j-route-show-default.txt", "v0", "10.77.0.1"),
        (
            "freebsd",
            "route -n get default",
            "freebsd/route-n-get-default__ohai-freebsd14-spec.txt",
            "vtnet0",
            "140.211.10.65",
        ),
        ("smartos", "netstat -rn -f inet", "solaris/netstat-rn__jackpal-gateway-solaris.txt", "net0", "172.16.32.1"),
        ("netbsd", "netstat -rn", "netbsd/netstat-rn__jackpal-gateway-evidence-netbsd.txt", "ena0", "172.31.16.1"),
    ],
)
def test_registry_finds_each_route_parser(os_name, command, rel, name, gateway):
    entry = registry.find(os_name, command)
    assert entry is not None
    (rec,) = entry.parse(fixture(rel), os_name)
    assert rec.name == name and rec.extra == (("default route", f"via {gateway}"),)
