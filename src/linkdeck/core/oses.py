"""Every OS linkdeck reads, and what follows from each: the one table.

Two records. A ``Family`` is what every OS of one family shares: the adapter that reads it
(``platforms/detect.ADAPTERS`` maps the family's key to the adapter class, so this core module
imports no platform), whether this machine is read through that adapter or psutil, its usual
ping, and the commands the findings' hints suggest (set the MTU, renegotiate the speed, the
counters that name an error's kind, the receive ring). An ``OsFacts`` row is one OS: its family,
what ``uname -s`` says on it, the command that installs iperf3 there, and its ping when it is
not the family's. It sits below the parsers and the platforms because both read it (the parser
registry matches commands by family), as do the findings' hints, the probe's ping and the
tests' install hints. A new OS is a row in ``OSES``; a new family is a ``Family`` in
``FAMILIES`` plus its adapter in ``platforms/`` (``tests/unit/test_oses.py`` checks every family has
one).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .units import printable

if TYPE_CHECKING:
    from .model import HostUpdate


@dataclass(frozen=True, slots=True)
class Ping:
    """A ping that can set don't-fragment and wait briefly for one echo reply: the command
    ``probe/templates.ping_script`` fills in (``{size}`` payload bytes, ``{addr}`` quoted,
    the wait as ``{wait_s}`` seconds, ``{wait_ms}`` or ``{wait_whole}`` whole seconds)."""

    command: str
    ipv6: bool = False  # it probes IPv6 paths too (only iputils sets don't-fragment there)


# Whose ping it is says how to ask for don't-fragment and a short wait.
PINGS: dict[str, Ping] = {
    "iputils": Ping("ping -M do -s {size} -c 1 -W {wait_s} {addr}", ipv6=True),
    "bsd": Ping("ping -D -s {size} -c 1 -W {wait_ms} {addr}"),
    "bsd_w": Ping("ping -D -s {size} -c 1 -w {wait_whole} {addr}"),  # OpenBSD, NetBSD: -w whole seconds
    "illumos": Ping("ping -s -D {addr} {size} 1"),  # statistics mode: size and count follow the host
}


@dataclass(frozen=True, slots=True)
class Family:
    """What the OSes of one family share. Hint commands are text with ``{name}`` (the
    interface, shell-quoted by the caller) and the values named per field; None where the
    family has no such command (the hint then says what to do in words)."""

    key: str  # the adapter's key in platforms/detect.ADAPTERS, and the parsers' family
    local_sampler: bool  # this machine read by the family's own adapter (False: psutil)
    ping: str  # the family's usual ping (a key of PINGS); an OS row may name another
    set_mtu: str  # {mtu}
    autoneg: str  # show what was negotiated, then advertise every speed again; {cap} on illumos
    # Commands that show the kind of the errors counted, by direction: receive (crc, frame,
    # length: damage on the wire) and transmit (carrier, collisions, FIFO: the sending side).
    rx_errors: tuple[str, ...] = ()
    tx_errors: tuple[str, ...] = ()
    # Commands that show why frames were dropped, by direction: receive (the rings, the
    # backlog between the driver and the stack) and transmit (the qdisc or send queue, the
    # transmit ring). Every family has both: a drops hint never comes without a command.
    rx_drops: tuple[str, ...] = ()
    tx_drops: tuple[str, ...] = ()
    ring_show: str | None = None  # the RX ring and its maximum
    ring_set: str | None = None  # {size}; "N" when unknown
    queues_set: str | None = None  # more receive queues


FAMILIES: dict[str, Family] = {
    "linux": Family(
        "linux",
        local_sampler=False,
        ping="iputils",
        set_mtu="ip link set dev {name} mtu {mtu}",
        autoneg="`ethtool {name}` (link partner modes), then `ethtool -s {name} autoneg on`",
        rx_errors=("ethtool -S {name}", "ip -s -s link show dev {name}"),
        tx_errors=("ethtool -S {name}", "ip -s -s link show dev {name}"),
        rx_drops=("ethtool -S {name}", "ethtool -g {name}", "cat /proc/net/softnet_stat"),
        tx_drops=("tc -s qdisc show dev {name}", "ethtool -g {name}", "ethtool -S {name}"),
        ring_show="ethtool -g {name}",
        ring_set="ethtool -G {name} rx {size}",
        queues_set="ethtool -L {name} combined N",
    ),
    "bsd": Family(
        "bsd",
        local_sampler=True,
        ping="bsd",
        set_mtu="ifconfig {name} mtu {mtu}",
        autoneg="`ifconfig -m {name}`, then `ifconfig {name} media autoselect`",
        # netstat -d adds the Drop column (the send queue's drops on FreeBSD, macOS, the other
        # BSDs); netstat -Q the netisr queues between the driver and the stack (FreeBSD)
        rx_drops=("netstat -I {name} -d", "netstat -Q", "netstat -m"),
        rx_errors=("netstat -I {name} -d",),  # Ierrs
        tx_errors=("netstat -I {name} -d",),  # Oerrs and Coll
        tx_drops=("netstat -I {name} -d", "sysctl net.link.ifqmaxlen"),
    ),
    "illumos": Family(
        "illumos",
        local_sampler=True,
        ping="illumos",
        set_mtu="dladm set-linkprop -p mtu={mtu} {name}",
        autoneg="`dladm show-linkprop -p {cap},adv_autoneg_cap {name}`, then `dladm set-linkprop -p {cap}=1 {name}`",
        # the link kstats count frames lost for want of a receive or transmit buffer
        rx_drops=("kstat -p link:0:{name}:norcvbuf", "dladm show-linkprop -p rx_rings {name}"),
        rx_errors=("kstat -p link:0:{name}:ierrors",),
        tx_errors=("kstat -p link:0:{name}:oerrors",),
        tx_drops=("kstat -p link:0:{name}:noxmtbuf", "dladm show-linkprop -p tx_rings {name}"),
    ),
}


@dataclass(frozen=True, slots=True)
class OsFacts:
    family: str  # a key of FAMILIES: the adapter and the parsers that read it
    iperf3_install: str | None  # None on Linux: it depends on the distribution
    uname: str | None = None  # `uname -s`, where the kernel's name alone says it is this OS
    ping: str | None = None  # a key of PINGS when not the family's usual one


OSES: dict[str, OsFacts] = {
    "linux": OsFacts("linux", None, "Linux"),
    "freebsd": OsFacts("bsd", "pkg install iperf3", "FreeBSD"),
    "opnsense": OsFacts("bsd", "pkg install iperf3"),
    "pfsense": OsFacts("bsd", "pkg install iperf3"),
    "truenas": OsFacts("bsd", "pkg install iperf3"),
    "dragonfly": OsFacts("bsd", "pkg install iperf3", "DragonFly"),
    "macos": OsFacts("bsd", "brew install iperf3", "Darwin"),
    "openbsd": OsFacts("bsd", "pkg_add iperf3", "OpenBSD", "bsd_w"),
    "netbsd": OsFacts("bsd", "pkgin install iperf3", "NetBSD", "bsd_w"),
    "illumos": OsFacts("illumos", None, "SunOS"),
    "smartos": OsFacts("illumos", "pkgin install iperf3"),
    "omnios": OsFacts("illumos", "pkg install iperf3"),
    "openindiana": OsFacts("illumos", "pkg install iperf3"),
    "solaris": OsFacts("illumos", "pkg install iperf3"),
}
# Names other tools use for the same OS.
_ALIASES = {"darwin": "macos", "sunos": "illumos", "local": "linux"}

# `uname -s` → OS, where the kernel's name alone says it. FreeBSD underneath may be OPNsense,
# pfSense or TrueNAS, and SunOS any illumos distribution or Solaris: detection
# (platforms/detect.py) looks further.
UNAME = {facts.uname: name for name, facts in OSES.items() if facts.uname}

# /etc/os-release ID (or an ID_LIKE entry) → the distribution's installer and its package
# names for iperf3 and for a ping that can set don't-fragment (busybox's cannot).
_LINUX_PACKAGES = (
    (("debian", "ubuntu", "raspbian", "linuxmint", "pop"), "apt install", "iperf3", "iputils-ping"),
    (("rhel", "fedora", "centos", "rocky", "almalinux", "ol", "amzn"), "dnf install", "iperf3", "iputils"),
    (("opensuse", "suse", "sles", "opensuse-leap", "opensuse-tumbleweed"), "zypper install", "iperf3", "iputils"),
    (("arch", "manjaro", "endeavouros"), "pacman -S", "iperf3", "iputils"),
    (("alpine",), "apk add", "iperf3", "iputils"),
    (("openwrt",), "opkg install", "iperf3", "iputils-ping"),
    (("gentoo",), "emerge", "net-misc/iperf", "net-misc/iputils"),
    (("void",), "xbps-install", "iperf3", "iputils"),
)
LINUX_IPERF3_FALLBACK = "apt install iperf3 (Debian/Ubuntu) or dnf install iperf3 (RHEL/Fedora)"
LINUX_PING_FALLBACK = "apt install iputils-ping (Debian/Ubuntu) or dnf install iputils (RHEL/Fedora)"
ANY_IPERF3 = "install iperf3 with the system's package manager"
ANY_PING = "install ping (iputils) with the system's package manager"


def canonical(os_name: str | None) -> str | None:
    """The table's name for ``os_name`` (``Darwin`` → macos), or None when it is not in it."""
    name = (os_name or "").lower()
    if name.startswith("linux"):
        return "linux"
    name = _ALIASES.get(name, name)
    return name if name in OSES else None


def family(os_name: str | None) -> str:
    """linux / bsd / illumos, or "other" for an OS linkdeck has no adapter for."""
    name = canonical(os_name)
    return OSES[name].family if name else "other"


def family_of(os_name: str | None) -> Family | None:
    """The family record of ``os_name``; None for an OS linkdeck has no adapter for."""
    return FAMILIES.get(family(os_name))


def local_os() -> str:
    """This machine's OS in the table's words (or Python's platform name when not in it)."""
    if sys.platform.startswith("linux"):
        return "linux"
    if sys.platform == "darwin":
        return "macos"
    if sys.platform.startswith("freebsd"):
        return "freebsd"
    if sys.platform.startswith("sunos"):
        return "illumos"
    return sys.platform


def iperf3_install(os_name: str | None, os_release: str = "") -> str:
    """The command that installs iperf3 on that OS. ``os_release`` is the text of
    /etc/os-release, which tells Linux distributions apart."""
    name = canonical(os_name)
    facts = OSES.get(name) if name else None
    if facts and facts.iperf3_install:
        return facts.iperf3_install
    return _linux_install(name, os_release, 2, LINUX_IPERF3_FALLBACK) or ANY_IPERF3


def ping_install(os_name: str | None, os_release: str = "") -> str:
    """The command that installs a ping with don't-fragment (iputils) on a Linux host; on
    the BSDs and illumos ping is part of the base system."""
    name = canonical(os_name)
    return _linux_install(name, os_release, 3, LINUX_PING_FALLBACK) or ANY_PING


def _linux_install(name: str | None, os_release: str, column: int, fallback: str) -> str | None:
    """The install command of ``_LINUX_PACKAGES``' package ``column`` for the distribution
    /etc/os-release names; ``fallback`` for a Linux not in the table; None when not Linux."""
    if name not in (None, "linux"):
        return None
    ids = _release_ids(os_release)
    for row in _LINUX_PACKAGES:
        if any(i in row[0] for i in ids):
            return f"{row[1]} {row[column]}"
    return fallback if name == "linux" or ids else None


def ping_flavour(os_name: str | None) -> str:
    """Whose ping the OS has (a key of ``PINGS``); iputils for an OS not in the table."""
    name = canonical(os_name)
    if name is None:
        return "iputils"
    return OSES[name].ping or FAMILIES[OSES[name].family].ping


def _release_ids(os_release: str) -> list[str]:
    ids: list[str] = []
    for line in os_release.splitlines():
        key, _, value = line.partition("=")
        if key.strip() in ("ID", "ID_LIKE"):
            ids += value.strip().strip("\"'").lower().split()
    return ids


# -- a host's OS in few words ------------------------------------------------------------------


def short_os(update: HostUpdate) -> str:
    """``debian 12``, ``freebsd 14.1``, ``truenas 13.0``, ``smartos``: the distribution and its
    major.minor version (a build stamp is no version); the full text is on the host screen."""
    detail = re.sub(r"\([^)]*\)", " ", update.os_detail or "")
    words = re.split(r"[\s\-]+", detail.strip())
    label = update.os or ""
    if label in ("linux", "") and words[0]:
        label = words[0]
    for word in words[1:]:
        version = _VERSION.match(word)
        if version:
            return printable(f"{label.lower()} {version.group(1)}")
    return printable(label.lower()) or "?"


_VERSION = re.compile(r"v?(\d{1,4}(?:\.\d{1,3})?)(?:\.\d+)*$")
_KERNEL = re.compile(r"\bkernel (\d+\.\d+)")


def os_family_label(update: HostUpdate) -> str:
    """A host's OS as a fleet summary counts it: the short OS and, when it says, the kernel's
    major.minor ("debian 12 (kernel 6.1)"); hosts alike but for build stamps count as one."""
    kernel = _KERNEL.search(update.os_detail or "")
    return (
        short_os(update) + (f" (kernel {kernel.group(1)})" if kernel else "")
        if (update.os or update.os_detail)
        else "OS unknown"
    )
