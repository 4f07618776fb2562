"""A Linux tick read with what the last one left (platforms/linux_tick.py) says what reading it
whole says: random tick streams (constructed) with idle and moving rows, renamed, added and
removed interfaces, a header that changes its columns, garbled rows and clocks, names listed
twice, sysfs lines that change, a missing or doubled TCP line; and the adapter's samples and
rates over a node-like stream through the real delta awk are those of reading every tick whole."""

from __future__ import annotations

import random

import pytest

from linkdeck.core.rates import RateTracker
from linkdeck.parsers.parse_error import ParseError
from linkdeck.platforms import linux_tick
from linkdeck.platforms.linux import LinuxAdapter
from linkdeck.platforms.linux_tick import TickReader
from tests.unit.platforms.test_delta_frames import frames_of, through_awk

TITLE = "/proc/net/dev:Inter-|   Receive                                                |  Transmit"
COLUMNS = (
    "/proc/net/dev: face |bytes    packets errs drop fifo frame compressed multicast"
    "|bytes    packets errs drop fifo colls carrier compressed"
)
SWAPPED = (
    "/proc/net/dev: face |packets bytes errs drop fifo frame compressed multicast"
    "|bytes    packets errs drop fifo colls carrier compressed"
)


def row(name: str, values: list[int]) -> str:
    return f"/proc/net/dev:{name:>15}: " + " ".join(f"{v:>8}" for v in values)


class Host:
    """A constructed host whose tick moves at random, now and then in a way only a whole read
    can follow: for one tick (a garbled row) or for a while (a name listed twice)."""

    def __init__(self, rng: random.Random, links: int) -> None:
        self.rng = rng
        self.rows = [[f"cali{i * 7919:011x}", [0] * 16] for i in range(links)]
        self.clock = 1000.0
        self.tcp = [5, 9] + [0] * 10
        self.tcp_lines = 1
        self.clocks = 1
        self.sysfs = ["/sys/class/net/eth0/operstate:up", "/sys/class/net/eth0/carrier_changes:2"]
        self.columns = COLUMNS

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.rows]

    def tick(self) -> str:
        rng = self.rng
        self.clock += 1.0
        self.tcp[0] += rng.choice((0, 1, 3))
        for _, vals in rng.sample(self.rows, min(len(self.rows), rng.choice((0, 1, 1, 2, 5)))):
            vals[0] += rng.randrange(60, 9000)
            vals[1] += rng.randrange(1, 9)
            vals[rng.choice((2, 3, 8, 11))] += rng.choice((0, 0, 1))
        odd = rng.random()
        if odd < 0.04 and len(self.rows) > 3:  # a link goes
            self.rows.pop(rng.randrange(len(self.rows)))
        elif odd < 0.08:  # one comes
            self.rows.insert(
                rng.randrange(len(self.rows) + 1),
                [f"veth{rng.randrange(1 << 40):011x}", [rng.randrange(100) for _ in range(16)]],
            )
        elif odd < 0.11 and self.rows:  # renamed where it stands
            rng.choice(self.rows)[0] = f"eth{rng.randrange(1000)}"
        elif odd < 0.13 and len(self.rows) > 1:  # a name listed twice, with counters of its own
            first, second = rng.sample(self.rows, 2)
            second[0] = first[0]
        elif odd < 0.15:
            self.columns = SWAPPED if self.columns == COLUMNS else COLUMNS
        elif odd < 0.20:
            self.sysfs[1] = f"/sys/class/net/eth0/carrier_changes:{rng.randrange(2, 5)}"
        elif odd < 0.22:
            self.clocks = rng.choice((1, 1, 2))
        elif odd < 0.25:
            self.tcp_lines = rng.choice((0, 1, 1, 2))
        elif odd < 0.35:  # the odd ways go again
            self.clocks = self.tcp_lines = 1
            seen = set()
            for r in self.rows:
                if r[0] in seen:
                    r[0] = f"veth{rng.randrange(1 << 40):011x}"
                seen.add(r[0])
        # a second clock line (one that stands still) comes first: the first one is the clock
        lines = ["/proc/uptime:5.00 1.00"] * (self.clocks - 1) + [
            f"/proc/uptime:{self.clock:.2f} 77.10",
            TITLE,
            self.columns,
        ]
        lines += [row(name, vals) for name, vals in self.rows]
        lines += self.sysfs
        lines += [f"tcp: {k} " + " ".join(map(str, self.tcp)) for k in range(self.tcp_lines)]
        return "\n".join(self._spoiled(lines)) + "\n"

    def _spoiled(self, lines: list[str]) -> list[str]:
        """Now and then, a tick that is wrong in one way (this tick only)."""
        rng = self.rng
        rows = [i for i, line in enumerate(lines) if line.startswith("/proc/net/dev:") and "|" not in line]
        at = rng.choice(rows) if rows else None
        odd = rng.random()
        if at is None or odd > 0.2:
            return lines
        if odd < 0.02:
            lines[at] = lines[at][:-1] + "x"  # a counter that is not a number
        elif odd < 0.04:
            lines[at] = "/proc/net/dev:   eth0: 1 2 3"  # too few counters
        elif odd < 0.06:
            lines[0] = "/proc/uptime:soon 1.0"
        elif odd < 0.08:
            lines[at] = TITLE  # a row turned header
        elif odd < 0.10:
            lines[at] = "/proc/net/dev:"  # a blank one
        elif odd < 0.12:
            lines.insert(2, "/proc/net/snmp:Mptcp: 1 2")  # a newer kernel's protocol
        elif odd < 0.14:
            lines[at] = "/proc/net/dex:" + lines[at][len("/proc/net/dev:") :]  # a row's text from another file
        elif odd < 0.16:
            lines[at] = lines[at].replace("/proc/net/dev:", "/proc/net/dev:" + " " * 3, 1)[:-3]  # the same name, moved
        elif odd < 0.18:
            lines[self.clocks - 1] = (
                "/proc/uptimX:" + lines[self.clocks - 1][len("/proc/uptime:") :]
            )  # a clock from another file
        elif odd < 0.20 and lines[-1].startswith("tcp:"):
            lines[-1] = "tcq:" + lines[-1][len("tcp:") :]  # TCP values from another
        return lines


def read_or_error(reader: TickReader, text: str):
    try:
        return reader.read(text)
    except ParseError as exc:
        return f"ParseError: {exc}"


@pytest.mark.parametrize("seed", range(6))
def test_a_tick_read_from_what_changed_equals_reading_it_whole(seed, monkeypatch):
    rng = random.Random(seed)
    host = Host(rng, rng.choice((3, 40, 600)))
    carried = 0
    plain_carried = linux_tick._carried

    def counting(last, lines):
        nonlocal carried
        tick = plain_carried(last, lines)
        carried += tick is not None
        return tick

    monkeypatch.setattr(linux_tick, "_carried", counting)
    reader = TickReader()
    errors = before = 0
    last = None
    for _ in range(400):
        text = host.tick() if rng.random() > 0.03 else last or host.tick()  # now and then the same tick again
        got = read_or_error(reader, text)
        counted, carried = carried, 0
        whole = read_or_error(TickReader(), text)
        assert got == whole
        errors += isinstance(got, str)
        before += counted
        last = text
    assert errors >= 10  # the spoiled ticks were met
    assert before >= 150  # and many ticks were read from what changed


def test_unchanged_rows_keep_their_counters_and_a_changed_one_is_read_again():
    host = Host(random.Random(1), 5)
    reader = TickReader()
    lines = [f"/proc/uptime:{t}.00 1.0" for t in (1, 2)]
    rows = [row(n, [k] * 16) for k, n in enumerate(host.names)]
    first = reader.read("\n".join([lines[0], TITLE, COLUMNS, *rows, "tcp: 1 2"]))
    rows[2] = row(host.names[2], [7] * 16)
    second = reader.read("\n".join([lines[1], TITLE, COLUMNS, *rows, "tcp: 1 3"]))
    assert (second.time, second.tcp, second.names) == (2.0, " 1 3", first.names)
    moved = host.names[2]
    assert second.counters[moved].rx_bytes == 7 and first.counters[moved].rx_bytes == 2
    assert all(second.counters[n] is first.counters[n] for n in host.names if n != moved)


def node_frames(rng: random.Random, ticks: int) -> list[tuple[bool, dict[str, list[str]]]]:
    """A node-like sampler stream (constructed): the tick with 300 idle rows and a few that
    move, slow facts every 10 ticks, a full frame now and then and when a link comes."""
    host = Host(rng, 300)
    frames = []
    for n in range(ticks):
        before = len(host.names)
        sections = {"tick": host.tick().splitlines()}
        if n % 10 == 0:
            sections["attrs"] = [f"/sys/class/net/{name}/speed:10000" for name in host.names[:5]]
            sections["tcp_names"] = [" InSegs OutSegs"]
        frames.append((n % 50 == 0 or len(host.names) != before, sections))
    return frames


def test_the_adapter_over_a_delta_stream_gives_the_samples_and_rates_of_whole_reads():
    """The sampler's real awk sends the stream as deltas; the adapter reads each tick from what
    changed, and an adapter given a fresh tick reader for every frame reads each whole: the
    same samples (or the same errors), the same rates."""
    rng = random.Random(20)
    frames = node_frames(rng, 150)
    from linkdeck.platforms.delta import expand

    base: dict[str, list[str]] = {}
    received = [expand(f, base) for f in frames_of(through_awk(frames))]
    assert len(received) == len(frames)
    carried, whole = LinuxAdapter(), LinuxAdapter()
    carried_rates, whole_rates = RateTracker(), RateTracker()
    samples = 0
    for frame in received:
        a = carried.sample_of(frame, 0.0)
        whole._ticks = TickReader()
        b = whole.sample_of(frame, 0.0)
        assert type(a) is type(b)
        if hasattr(a, "message"):
            assert a == b
            continue
        samples += 1
        assert (a.time, a.interfaces, a.counters, a.tcp) == (b.time, b.interfaces, b.counters, b.tcp)
        assert carried_rates.update(a) == whole_rates.update(b)
    assert samples >= 100
