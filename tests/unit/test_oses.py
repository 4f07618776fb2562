"""The table of OSes and families: every family has an adapter, every OS is built the same
way, and an OS linkdeck has no adapter for is an error, never another family's adapter."""

from __future__ import annotations

import inspect

import pytest

from linkdeck.core.model import Interface, SubnetMtu
from linkdeck.core.oses import FAMILIES, OSES, PINGS, UNAME, family, family_of, ping_flavour
from linkdeck.findings.counters import _ring_hint
from linkdeck.findings.helpers import Port, autoneg_hint
from linkdeck.findings.mtu import mtu_mismatch
from linkdeck.platforms.adapter import Adapter
from linkdeck.platforms.detect import ADAPTERS, UnsupportedOS, make_adapter
from linkdeck.platforms.psutil_adapter import LocalAdapter
from linkdeck.recording.replay import replay_adapter
from linkdeck.settings.config import Settings


def test_every_family_has_an_adapter_and_every_os_a_family() -> None:
    assert set(ADAPTERS) == set(FAMILIES)
    for name, facts in OSES.items():
        assert facts.family in FAMILIES, name
        assert ping_flavour(name) in PINGS, name
    assert {fam.ping for fam in FAMILIES.values()} <= set(PINGS)


def test_every_adapter_is_built_the_same_way() -> None:
    expected = inspect.signature(Adapter.__init__)
    for cls in (*ADAPTERS.values(), LocalAdapter):
        assert inspect.signature(cls.__init__) == expected, cls.__name__


@pytest.mark.parametrize("os_name", sorted(OSES))
def test_each_os_gets_its_familys_adapter_built_with_its_own_name(os_name: str) -> None:
    adapter = make_adapter(None, os_name, f"{os_name} 1.0", Settings(facts_every=7))
    assert type(adapter) is ADAPTERS[family(os_name)]
    assert (adapter.os, adapter.os_detail, adapter.facts_every) == (os_name, f"{os_name} 1.0", 7)


@pytest.mark.parametrize("os_name", ["plan9", "haiku", "", "windows"])
def test_an_os_with_no_adapter_is_a_clear_error_not_the_illumos_adapter(os_name: str) -> None:
    with pytest.raises(UnsupportedOS) as caught:
        make_adapter(None, os_name, None, Settings())
    message = str(caught.value)
    assert "\n" not in message
    assert repr(os_name) in message and "'other'" in message
    assert "--prometheus" in message  # what to do instead
    assert caught.value.retryable is False


def test_a_replay_of_an_unknown_os_has_no_reader_and_a_known_one_keeps_its_name() -> None:
    assert replay_adapter("plan9", None, "sh", Settings()) is None
    assert replay_adapter(None, None, "sh", Settings()) is None
    openbsd = replay_adapter("openbsd", "OpenBSD 7.5", "sh", Settings())
    assert openbsd is not None and (openbsd.os, openbsd.os_detail) == ("openbsd", "OpenBSD 7.5")
    local = replay_adapter("linux", "Debian", "psutil", Settings(facts_every=3))
    assert local is not None and (local.os, local.facts_every) == ("linux", 3)


def test_uname_names_come_from_the_os_rows() -> None:
    assert UNAME == {
        "Linux": "linux",
        "FreeBSD": "freebsd",
        "Darwin": "macos",
        "OpenBSD": "openbsd",
        "NetBSD": "netbsd",
        "DragonFly": "dragonfly",
        "SunOS": "illumos",
    }


def test_ping_flavour_is_the_familys_unless_the_os_row_names_another() -> None:
    assert [ping_flavour(n) for n in ("linux", "freebsd", "macos", "openbsd", "netbsd", "smartos", "plan9")] == [
        "iputils",
        "bsd",
        "bsd",
        "bsd_w",
        "bsd_w",
        "illumos",
        "iputils",
    ]
    assert [name for name, p in PINGS.items() if p.ipv6] == ["iputils"]


@pytest.mark.parametrize(
    "os_name, expected",
    [
        ("linux", "`ethtool 'eth0;x'` (link partner modes), then `ethtool -s 'eth0;x' autoneg on`"),
        ("opnsense", "`ifconfig -m 'eth0;x'`, then `ifconfig 'eth0;x' media autoselect`"),
        (
            "omnios",
            "`dladm show-linkprop -p en_1000fdx_cap,adv_autoneg_cap 'eth0;x'`, "
            "then `dladm set-linkprop -p en_1000fdx_cap=1 'eth0;x'`",
        ),
        ("plan9", "its autonegotiation settings"),
    ],
)
def test_hint_commands_come_from_the_family_record_with_the_name_quoted(os_name: str, expected: str) -> None:
    port = Port("h", os_name, Interface(name="eth0;x"))
    assert port.family is family_of(os_name)
    assert autoneg_hint(port, 1000).endswith(expected)


@pytest.mark.parametrize(
    "os_name, command",
    [
        ("linux", "`ip link set dev 'igb0;x' mtu 9000`"),
        ("truenas", "`ifconfig 'igb0;x' mtu 9000`"),
        ("smartos", "`dladm set-linkprop -p mtu=9000 'igb0;x'`"),
        ("plan9", "set igb0;x's MTU to 9000"),
    ],
)
def test_the_mtu_hint_is_the_familys_command(os_name: str, command: str) -> None:
    def port(host: str, os: str, mtu: int) -> Port:
        return Port(
            host,
            os,
            Interface(name="igb0;x", oper="up", mtu=mtu, kind="physical", addresses=(f"10.0.0.{len(host)}/24",)),
        )

    probed = {"10.0.0.0/24": SubnetMtu("10.0.0.0/24", (1500, 9000), ("a", "bb"), 9000)}  # the switch carries 9000
    found = mtu_mismatch([port("a", "linux", 9000), port("bb", "linux", 9000), port("ccc", os_name, 1500)], probed)
    assert [(f.host, f.code) for f in found] == [("ccc", "MTU_MISMATCH")]
    assert command in found[0].hint


def test_the_ring_hint_names_commands_only_where_the_family_has_them() -> None:
    ring = Interface(name="ix0", ring_rx=512, ring_rx_max=4096)
    assert _ring_hint(Port("h", "linux", ring)) == (
        "RX ring 512 of 4096",
        "try a larger RX ring: `ethtool -G ix0 rx 2048`, then watch whether the counter stops",
    )
    assert _ring_hint(Port("h", "freebsd", ring)) == (
        "RX ring 512 of 4096",
        "try a larger RX ring: raise the driver's receive ring to 2048 descriptors, "
        "then watch whether the counter stops",
    )
