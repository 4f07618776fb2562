"""Every OS linkdeck reads, and what follows from each: the one table.

Which adapter and parsers read an OS (its family), what `uname -s` says on it, the command
that installs iperf3 there, and which ping it has (for the path MTU probe). It sits below the parsers and the platforms because both
read it (the parser registry matches commands by family), as do the findings' hints and the
tests' install hints. A new OS is a row here plus, if its family is new, an adapter in
``platforms/``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class OsFacts:
    family: str  # "linux", "bsd" or "illumos": the adapter and the parsers that read it
    iperf3_install: str | None  # None on Linux: it depends on the distribution
    # Whose ping it is, which says how to ask for don't-fragment and a short wait (the
    # templates in probe/templates.py): "iputils" (-M do, -W seconds), "bsd" (-D, -W ms),
    # "bsd_w" (-D, -w whole seconds: OpenBSD, NetBSD), "illumos" (-D, -s statistics mode).
    ping: str = "bsd"


OSES: dict[str, OsFacts] = {
    "linux": OsFacts("linux", None, "iputils"),
    "freebsd": OsFacts("bsd", "pkg install iperf3"),
    "opnsense": OsFacts("bsd", "pkg install iperf3"),
    "pfsense": OsFacts("bsd", "pkg install iperf3"),
    "truenas": OsFacts("bsd", "pkg install iperf3"),
    "dragonfly": OsFacts("bsd", "pkg install iperf3"),
    "macos": OsFacts("bsd", "brew install iperf3"),
    "openbsd": OsFacts("bsd", "pkg_add iperf3", "bsd_w"),
    "netbsd": OsFacts("bsd", "pkgin install iperf3", "bsd_w"),
    "illumos": OsFacts("illumos", None, "illumos"),
    "smartos": OsFacts("illumos", "pkgin install iperf3", "illumos"),
    "omnios": OsFacts("illumos", "pkg install iperf3", "illumos"),
    "openindiana": OsFacts("illumos", "pkg install iperf3", "illumos"),
    "solaris": OsFacts("illumos", "pkg install iperf3", "illumos"),
}
FAMILIES = ("linux", "bsd", "illumos")
# Names other tools use for the same OS.
_ALIASES = {"darwin": "macos", "sunos": "illumos", "local": "linux"}

# `uname -s` → OS, where the kernel's name alone says it. FreeBSD underneath may be OPNsense,
# pfSense or TrueNAS, and SunOS any illumos distribution or Solaris: detection looks further.
UNAME = {
    "Linux": "linux",
    "FreeBSD": "freebsd",
    "Darwin": "macos",
    "OpenBSD": "openbsd",
    "NetBSD": "netbsd",
    "DragonFly": "dragonfly",
    "SunOS": "illumos",
}

# /etc/os-release ID (or an ID_LIKE entry) → the distribution's installer and its package
# names for iperf3 and for a ping that can set don't-fragment (busybox's cannot).
_LINUX_PACKAGES = (
    (("debian", "ubuntu", "raspbian", "linuxmint", "pop"), "apt install", "iperf3", "iputils-ping"),
    (("rhel", "fedora", "centos", "rocky", "almalinux", "ol", "amzn"), "dnf install", "iperf3", "iputils"),
    (("opensuse", "suse", "sles", "opensuse-leap", "opensuse-tumbleweed"), "zypper install", "iperf3", "iputils"),
    (("arch", "manjaro", "endeavouros"), "pacman -S", "iperf3", "iputils"),
    (("alpine",), "apk add", "iperf3", "iputils"),
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
    """Whose ping the OS has (see ``OsFacts.ping``); iputils for an OS not in the table."""
    name = canonical(os_name)
    return OSES[name].ping if name else "iputils"


def _release_ids(os_release: str) -> list[str]:
    ids: list[str] = []
    for line in os_release.splitlines():
        key, _, value = line.partition("=")
        if key.strip() in ("ID", "ID_LIKE"):
            ids += value.strip().strip("\"'").lower().split()
    return ids
