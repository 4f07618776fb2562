import pytest

from linkdeck.core import units


@pytest.mark.parametrize(
    "value, unit, expected",
    [
        (1000, "mbps", 1000),
        ("10000", "mbps", 10000),
        (0, "mbps", None),
        (-1, "mbps", None),
        (65535, "mbps", None),
        (4294967295, "mbps", None),
        ("Unknown!", "mbps", None),
        ("1000Mb/s", "mbps", 1000),
        (None, "mbps", None),
        (1_000_000_000, "bps", 1000),  # kstat ifspeed / FreeBSD baudrate are bit/s
        (10_000_000_000, "bps", 10000),
        (0, "bps", None),
        (4294967295, "bps", None),
        ("garbage", "mbps", None),
    ],
)
def test_speed_sentinels(value, unit, expected):
    assert units.speed_mbps(value, unit) == expected


@pytest.mark.parametrize(
    "bps, in_bytes, text",
    [
        (None, False, "—"),
        (0, False, "0 b/s"),
        (940_000_000, False, "940 Mb/s"),
        (94_120_000, False, "94.1 Mb/s"),
        (9_412_000_000, False, "9.41 Gb/s"),
        (999.6, False, "1.00 kb/s"),
        (8_000_000, True, "1.00 MB/s"),
        (800, True, "100 B/s"),
    ],
)
def test_rate(bps, in_bytes, text):
    assert units.rate(bps, in_bytes) == text


def test_link_speed_and_percent():
    assert [units.link_speed(s) for s in (None, 10, 100, 1000, 2500, 10000)] == [
        "—",
        "10M",
        "100M",
        "1G",
        "2.5G",
        "10G",
    ]
    assert units.percent(None) == "—"
    assert units.percent(94.1) == "94%"
    assert units.percent(3.25) == "3.2%"


def test_utilisation_full_vs_half_duplex():
    assert units.utilisation(400e6, 100e6, 1000, "full") == 40.0
    assert units.utilisation(400e6, 100e6, 1000, "half") == 50.0
    assert units.utilisation(400e6, 100e6, None, "full") is None
    assert units.utilisation(None, 100e6, 1000, "full") is None


def test_printable_neutralises_terminal_escapes():
    hostile = "eth0\x1b[2J\x07evil"
    out = units.printable(hostile)
    assert "\x1b" not in out and "\x07" not in out
    assert out == "eth0\\x1b[2J\\x07evil"
    assert units.printable("en0") == "en0"


def test_per_second_and_sizes():
    assert units.per_second(None) == "—"
    assert units.per_second(0) == "0"
    assert units.per_second(2.5) == "2.5"
    assert units.per_second(150_000) == "150 k"
    assert units.size_bytes(1_234_000_000) == "1.23 GB"


@pytest.mark.parametrize(
    "value, said",
    [
        (70, "70 B"),
        (0, "0 B"),
        (5, "5 B"),
        (999, "999 B"),
        (999.4, "999 B"),
        (999.6, "1.00 kB"),
        (1500, "1.50 kB"),
        (70_000, "70.0 kB"),
    ],
)
def test_a_byte_count_has_no_fraction_below_a_kilobyte(value, said):
    # issue 23: the detail screen said "70.0 B" for 70 bytes since start
    assert units.size_bytes(value) == said


def test_a_rate_keeps_its_fraction():
    # the fix is for counts of bytes; 70 bytes a second stays a measured rate
    assert units.rate(560, in_bytes=True) == "70.0 B/s"


@pytest.mark.parametrize(
    "name, kind",
    [
        ("lo", "loopback"),
        ("lo0", "loopback"),
        ("br0", "bridge"),
        ("br-3fa2c1", "bridge"),
        ("docker0", "bridge"),
        ("vlan163", "vlan"),
        ("eth0.100", "vlan"),
        ("lagg0", "bond"),
        ("aggr0", "bond"),
        ("wg0", "tunnel"),
        ("utun3", "tunnel"),
        ("veth3f2a1b", "virtual"),
        ("epair40b", "virtual"),
        ("vtnet0", "virtual"),
        ("vioif0", "virtual"),
        ("hn1", "virtual"),
        ("cali3f2a1b0c9d8", "virtual"),  # a Calico pod's veth
        ("lxc9e1f2a3b4c5d", "virtual"),  # a Cilium pod's
        ("calico", "unknown"),
        ("lxcbr0", "unknown"),
        ("wlan0", "wireless"),
        ("wlp3s0", "wireless"),
        # prefixes alone say nothing: these are not access points, laggs or loopbacks
        ("apple0", "unknown"),
        ("lagoon", "unknown"),
        ("long0", "unknown"),
        ("em0", "unknown"),
    ],
)
def test_kind_from_name(name, kind):
    from linkdeck.core.kinds import guess_kind

    assert guess_kind(name) == kind


@pytest.mark.parametrize(
    "value, text", [(9.996, "10.0"), (99.96, "100"), (80.0, "80.0"), (9.5, "9.50"), (10.0, "10.0")]
)
def test_significant_digits_are_chosen_after_rounding(value, text):
    assert units.si(value, "").strip() == text


@pytest.mark.parametrize("garbled", ["inf", "1e400", "nan", float("inf"), float("nan")])
def test_non_finite_speeds_are_unknown(garbled):
    assert units.speed_mbps(garbled) is None
    assert units.speed_mbps(garbled, "bps") is None


def test_zero_or_negative_speed_has_no_utilisation():
    assert units.utilisation(1e6, 1e6, 0, "full") is None
    assert units.utilisation(1e6, 1e6, -5, "full") is None


@pytest.mark.parametrize(
    "value, text",
    [
        (None, "—"),
        (0, "0%"),
        (100.0, "100%"),
        (99.6, "100%"),
        (71.4, "71%"),
        (9.5, "9.5%"),
        (1.25, "1.2%"),
        (0.07, "0.07%"),
        (0.0025, "0.0025%"),
        (0.00001, "<0.001%"),
        (97.3, "97%"),
        (float("nan"), "—"),
    ],
)
def test_percent_is_one_form_and_never_exponent_notation(value, text):
    assert units.percent(value) == text


def test_seconds_speed_words_and_the_arrow():
    assert [units.seconds(v) for v in (5.00146, 0.25, 150.0, None)] == ["5.0 s", "0.25 s", "150 s", "—"]
    assert [units.link_speed(s, words=True) for s in (None, 100, 1000, 2500, 10000)] == [
        "—",
        "100 Mb/s",
        "1 Gb/s",
        "2.5 Gb/s",
        "10 Gb/s",
    ]
    assert units.arrow("a", "b") == "a → b"
    assert [units.times(x) for x in (29.4, 2.46)] == ["29×", "2.5×"]
