"""ethtool IF / -S / -g / -i over real captures (tests/fixtures/linux/, 4-line header stripped)."""

import pytest

from linkdeck.parsers import ParseError, registry
from linkdeck.parsers.ethtool import (
    driver_record,
    link_mode_speeds,
    parse_driver,
    parse_offload,
    parse_rings,
    parse_settings,
    parse_stats,
)
from tests.corpus import fixture

# ---------------------------------------------------------------- ethtool IF


def test_settings_tg3_debian11():
    rec = parse_settings(fixture("linux/ethtool__lolyu-aoi-tg3-debian11.txt"))
    assert rec.name == "eth0"
    assert (rec.speed_mbps, rec.duplex) == (1000, "full")
    assert rec.supported_speeds_mbps == (10, 100, 1000)
    assert rec.oper is None  # the capture ends before "Link detected"
    extra = dict(rec.extra)
    assert extra["port"] == "Twisted Pair"
    assert extra["link partner advertised"] == "1000baseT/Full"
    assert extra["advertised link modes"].split()[0] == "10baseT/Half"


def test_settings_old_ethtool_3_13_usb_5g_adapter_at_1g():
    rec = parse_settings(fixture("linux/ethtool__bb-qq-aqc111-issue-1-eth2-old-ethtool.txt"))
    assert (rec.name, rec.speed_mbps, rec.duplex, rec.oper) == ("eth2", 1000, "full", "up")
    assert rec.supported_speeds_mbps == (100, 1000)
    assert dict(rec.extra)["port"] == "MII"


def test_settings_netlink_error_mid_output_is_skipped():
    rec = parse_settings(fixture("linux/ethtool__node-exporter-fixture-eth0-netlink-error.txt"))
    assert (rec.name, rec.speed_mbps, rec.duplex, rec.oper) == ("eth0", 1000, "full", "up")
    assert rec.supported_speeds_mbps == (10, 100, 1000, 10000)
    assert dict(rec.extra)["auto-negotiation"] == "on"


def test_settings_speed_and_duplex_unknown_on_sfp_without_link():
    rec = parse_settings(fixture("linux/ethtool__openwrt-issue-22126-lan12-speed-unknown.txt"))
    assert rec.name == "lan12"
    assert rec.speed_mbps is None and rec.duplex is None
    assert rec.oper == "down"
    assert rec.supported_speeds_mbps == (1000, 2500, 10000)
    assert dict(rec.extra)["port"] == "FIBRE"


def test_settings_tabs_and_trailing_spaces_e1000e():
    rec = parse_settings(fixture("linux/ethtool__pyroute2-issue-720-enp0s31f6.txt"))
    assert (rec.name, rec.speed_mbps, rec.duplex, rec.oper) == ("enp0s31f6", 1000, "full", "up")
    assert rec.supported_speeds_mbps == (10, 100, 1000)


def test_settings_partial_paste_without_header_uses_given_name():
    rec = parse_settings(fixture("linux/ethtool__tch-nginx-gui-issue-1000-partial.txt"), name="enp3s0")
    assert rec.name == "enp3s0"
    assert rec.supported_speeds_mbps == (10, 100, 1000)
    assert rec.speed_mbps is None  # no Speed line in the paste
    assert dict(rec.extra)["advertised link modes"] == "1000baseT/Full"


def test_settings_captured_veth_and_bridge():
    veth = parse_settings(fixture("linux/captured-ethtool-veth0.txt"))
    assert (veth.name, veth.speed_mbps, veth.duplex, veth.oper) == ("veth0", 10000, "full", "up")
    assert veth.supported_speeds_mbps == ()  # "Not reported"
    br = parse_settings(fixture("linux/captured-ethtool-br0.txt"))
    assert (br.name, br.speed_mbps, br.duplex) == ("br0", 10000, None)  # "Unknown! (255)"
    assert dict(br.extra)["port"] == "Other"


def test_settings_minus_one_speed_is_unknown():
    rec = parse_settings("Settings for eth9:\n\tSpeed: -1Mb/s\n\tDuplex: Half\n\tLink detected: no\n")
    assert (rec.speed_mbps, rec.duplex, rec.oper) == (None, "half", "down")


def test_settings_only_errors_raise_with_the_first_error():
    with pytest.raises(ParseError) as exc:
        parse_settings(fixture("linux/captured-ethtool-nosuch0.txt"))
    assert "netlink error: no device matches name" in str(exc.value)
    with pytest.raises(ParseError, match="Cannot get device settings: No such device"):
        parse_settings("Cannot get device settings: No such device\nNo data available\n")


def test_link_mode_speeds():
    assert link_mode_speeds("10baseT/Half 10baseT/Full 100baseT/Full 1000baseT/Full") == (10, 100, 1000)
    assert link_mode_speeds("25000baseCR/Full 100000baseSR4/Full Not reported") == (25000, 100000)


# ---------------------------------------------------------------- ethtool -S


def test_stats_mlx5_kernel_5_15_values_beyond_32_bits():
    stats = parse_stats(fixture("linux/ethtool-S__bpf-list-mlx5-kernel-5.15-filtered.txt"))
    assert stats["rx_out_of_buffer"] == 990473555
    assert stats["rx_discards_phy"] == 58591428329
    assert stats["rx_bytes_phy"] == 6211329423080
    assert stats["tx_packets"] == 25


def test_stats_mlx5_kernel_6_5_page_pool():
    stats = parse_stats(fixture("linux/ethtool-S__bpf-list-mlx5-kernel-6.5-filtered.txt"))
    assert stats["rx_pp_alloc_fast"] == 3641784
    assert stats["rx_bytes_phy"] == 46609758231313
    assert stats["rx_out_of_buffer"] == 534918379


def test_stats_without_header_or_indent_e1000e():
    stats = parse_stats(fixture("linux/ethtool-S__ethq-tests-e1000e-stripped.txt"))
    assert stats["rx_packets"] == 567425 and stats["rx_bytes"] == 703224479
    assert stats["rx_no_buffer_count"] == 0 and stats["rx_csum_offload_good"] == 565981


def test_stats_igb_per_queue():
    stats = parse_stats(fixture("linux/ethtool-S__insights-core-igb-4queues.txt"))
    assert stats["tx_queue_1_packets"] == 935473
    assert stats["tx_queue_1_bytes"] == 181899495
    assert stats["rx_long_byte_count"] == 96506134


def test_stats_tg3_partial():
    stats = parse_stats(fixture("linux/ethtool-S__lolyu-aoi-tg3-debian11-partial.txt"))
    assert len(stats) == 16
    assert stats["rx_octets"] == 314843626 and stats["rx_bcast_packets"] == 2544401


def test_stats_r8169_with_echoed_prompt_and_name_with_space():
    stats = parse_stats(fixture("linux/ethtool-S__node-exporter-fixture-eth0-r8169-style.txt"))
    assert stats["rx_missed"] == 401 and stats["rx_packets"] == 1260062
    assert stats["duplicate metric"] == 1 and stats["duplicate_metric"] == 2


def test_stats_captured_veth():
    stats = parse_stats(fixture("linux/captured-ethtool-S-veth0.txt"))
    assert stats["peer_ifindex"] == 2 and stats["rx_queue_0_drops"] == 0
    assert len(stats) == 10


@pytest.mark.parametrize(
    "name, message",
    [
        (
            "ethtool-S__insights-core-error-not-supported.txt",
            "Cannot get stats strings information: Operation not supported",
        ),
        ("captured-ethtool-S-br0.txt", "no stats available"),
    ],
)
def test_stats_not_available(name, message):
    with pytest.raises(ParseError) as exc:
        parse_stats(fixture(f"linux/{name}"))
    assert message in str(exc.value) and "not available" in str(exc.value)


def test_stats_garbage_line():
    with pytest.raises(ParseError, match="expected 'name: number'"):
        parse_stats("NIC statistics:\n     rx_packets: 12\n     rx_bytes: lots\n")


# ---------------------------------------------------------------- ethtool -g


def test_rings_sosreport_odd_maxima_blank_line_between_sections():
    assert parse_rings(fixture("linux/ethtool-g__insights-core-eth2-sosreport.txt")) == (200, 2047, 511, 511)


def test_rings_tg3_with_na_mini_jumbo():
    assert parse_rings(fixture("linux/ethtool-g__lolyu-aoi-tg3-debian11.txt")) == (200, 511, 511, 511)


def test_rings_na_values_are_none():
    text = (
        "Ring parameters for eth0:\nPre-set maximums:\nRX:\t\tn/a\n"
        "TX:\t\t4096\nCurrent hardware settings:\nRX:\t\tn/a\nTX:\t\t512\n"
    )
    assert parse_rings(text) == (None, None, 512, 4096)


@pytest.mark.parametrize(
    "name, message",
    [
        ("ethtool-g__insights-core-error-no-such-device.txt", "Cannot get device ring settings: No such device"),
        ("captured-ethtool-g-veth0.txt", "netlink error: Operation not supported"),
        ("captured-ethtool-g-br0.txt", "netlink error: Operation not supported"),
    ],
)
def test_rings_not_available(name, message):
    with pytest.raises(ParseError) as exc:
        parse_rings(fixture(f"linux/{name}"))
    assert message in str(exc.value)


def test_rings_non_numeric():
    with pytest.raises(ParseError, match="ring size is not a number"):
        parse_rings("Pre-set maximums:\nRX: many\n")


# ---------------------------------------------------------------- ethtool -i


def test_driver_tg3():
    info = parse_driver(fixture("linux/ethtool-i__lolyu-aoi-tg3-debian11.txt"))
    assert info["driver"] == "tg3"
    assert info["firmware-version"] == "sb" and info["bus-info"] == "0000:02:00.0"
    assert "expansion-rom-version" not in info  # printed empty


def test_driver_captured_veth_and_bridge():
    assert parse_driver(fixture("linux/captured-ethtool-i-veth0.txt"))["driver"] == "veth"
    br = parse_driver(fixture("linux/captured-ethtool-i-br0.txt"))
    assert (br["driver"], br["version"], br["bus-info"]) == ("bridge", "2.3", "N/A")


def test_driver_record_leaves_n_a_unknown():
    # the bridge's "firmware-version: N/A" and "bus-info: N/A" (captured) say nothing
    br = driver_record(fixture("linux/captured-ethtool-i-br0.txt"), "br0")
    assert (br.name, br.driver, br.driver_version, br.firmware_version, br.extra) == ("br0", "bridge", "2.3", None, ())
    tg3 = driver_record(fixture("linux/ethtool-i__lolyu-aoi-tg3-debian11.txt"))
    assert tg3.extra == (("bus-info", "0000:02:00.0"),)


def test_driver_not_available():
    with pytest.raises(ParseError, match="Cannot get driver information: Operation not supported"):
        parse_driver("Cannot get driver information: Operation not supported\n")


# ---------------------------------------------------------------- ethtool -k


def test_offload_captured_veth_lo_and_veth_turned_off():
    # real ethtool -k output captured in the lab (ethtool 6.1, Linux 6.18): a veth's defaults,
    # lo's, and a veth after `ethtool -K veth1 tso off gso off gro off`
    on = {"tcp-segmentation-offload": True, "generic-segmentation-offload": True}
    assert parse_offload(fixture("linux/captured-ethtool-k-veth0.txt")) == {**on, "generic-receive-offload": False}
    assert parse_offload(fixture("linux/captured-ethtool-k-lo.txt")) == {**on, "generic-receive-offload": True}
    assert set(parse_offload(fixture("linux/captured-ethtool-k-veth1-off.txt")).values()) == {False}


def test_offload_as_the_sampler_filters_it_and_fixed_states():
    # the sampler keeps only the three lines; "[fixed]" and "[requested on]" follow the state
    text = "tcp-segmentation-offload: off [requested on]\ngeneric-segmentation-offload: on [fixed]\n"
    assert parse_offload(text) == {"tcp-segmentation-offload": False, "generic-segmentation-offload": True}


def test_offload_not_available():
    with pytest.raises(ParseError, match="not available: netlink error: no device matches name"):
        parse_offload(fixture("linux/captured-ethtool-k-nosuch0.txt"))
    with pytest.raises(ParseError, match="neither on nor off"):
        parse_offload("generic-receive-offload: maybe\n")
    with pytest.raises(ParseError, match="no offload settings"):
        parse_offload("rx-checksumming: on\n")


# ---------------------------------------------------------------- registry


def test_registry_entries_take_the_name_from_nowhere_but_fill_what_they_know():
    rings = registry.find("linux", "ethtool -g eth2")
    (rec,) = rings.parse(fixture("linux/ethtool-g__insights-core-eth2-sosreport.txt"), "linux")
    assert (rec.name, rec.ring_rx, rec.ring_rx_max, rec.ring_tx, rec.ring_tx_max) == ("", 200, 2047, 511, 511)
    (rec,) = registry.find("linux", "ethtool -S eth0").parse(
        fixture("linux/ethtool-S__node-exporter-fixture-eth0-r8169-style.txt"), "linux"
    )
    assert rec.nic_counters["rx_missed"] == 401
    (rec,) = registry.find("linux", "ethtool -i eth0").parse(
        fixture("linux/ethtool-i__lolyu-aoi-tg3-debian11.txt"), "linux"
    )
    assert (rec.driver, rec.driver_version, rec.firmware_version) == ("tg3", "5.10.0-30-2-amd64", "sb")
    (rec,) = registry.find("linux", "ethtool enp0s31f6").parse(
        fixture("linux/ethtool__pyroute2-issue-720-enp0s31f6.txt"), "linux"
    )
    assert rec.name == "enp0s31f6" and rec.speed_mbps == 1000
    (rec,) = registry.find("linux", "ethtool -k veth0").parse(fixture("linux/captured-ethtool-k-veth0.txt"), "linux")
    assert rec.offload == ("tcp-segmentation-offload", "generic-segmentation-offload")
    assert registry.find("linux", "ethtool -S") is None
