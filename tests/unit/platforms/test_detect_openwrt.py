"""OpenWrt told apart: by /etc/os-release where it has one (18.06 on), by
/etc/openwrt_release before; and its installer named (constructed probe outputs, in the
files' documented formats)."""

from __future__ import annotations

from linkdeck.core.oses import iperf3_install, ping_install
from linkdeck.platforms.detect import MARK, classify

_OLD_OPENWRT = (
    "DISTRIB_ID='OpenWrt'\nDISTRIB_RELEASE='17.01.7'\nDISTRIB_DESCRIPTION='OpenWrt 17.01.7 r4030-6028f00df0'\n"
)
_NEW_OS_RELEASE = (
    'NAME="OpenWrt"\nVERSION="23.05.3"\nID="openwrt"\nID_LIKE="lede openwrt"\nPRETTY_NAME="OpenWrt 23.05.3"\n'
)


def _probe(**sections: str) -> str:
    return "".join(
        f"{MARK}{key}\n{text}" for key, text in {"uname_s": "Linux\n", "uname_r": "5.15.150\n", **sections}.items()
    )


def test_an_openwrt_without_os_release_is_named_from_openwrt_release() -> None:
    assert classify(_probe(openwrt_release=_OLD_OPENWRT)) == (
        "linux",
        "OpenWrt 17.01.7 r4030-6028f00df0 (kernel 5.15.150)",
    )


def test_openwrt_installs_with_opkg_and_its_ping_can_set_dont_fragment() -> None:
    assert classify(_probe(os_release=_NEW_OS_RELEASE))[1] == "OpenWrt 23.05.3 (kernel 5.15.150)"
    assert iperf3_install("linux", _NEW_OS_RELEASE) == "opkg install iperf3"
    assert ping_install("linux", _NEW_OS_RELEASE) == "opkg install iputils-ping"
