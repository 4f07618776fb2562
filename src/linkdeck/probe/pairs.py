"""Every pair of hosts, one test after another, and the exports: the JSON of one test
(``linkdeck test --json``), the matrix as JSON and CSV. Each test runs both directions, so
each pair is tested once unless both orders are asked for."""

from __future__ import annotations

import csv
import io
import itertools
from dataclasses import dataclass
from typing import Awaitable, Callable

from ..core.jsonfields import Field, without, write
from ..core.model import CAUSE_JSON, PATH_MTU_JSON, PathMtu, TestResult
from ..verdict.goodput import direction_pcts
from .watched import Outcome

# Runs one pair (src, dst) and returns its outcome; the caller picks address and interfaces.
PairRunner = Callable[[str, str], Awaitable[Outcome]]
CellDone = Callable[[str, str, Outcome], None]


def ordered_pairs(hosts: list[str]) -> list[tuple[str, str]]:
    return list(itertools.permutations(dict.fromkeys(hosts), 2))


def matrix_pairs(hosts: list[str], ordered: bool = False) -> list[tuple[str, str]]:
    """The pairs a matrix tests: each unordered pair once (the first named sends first; the
    test measures both directions), or every ordered pair."""
    return ordered_pairs(hosts) if ordered else list(itertools.combinations(dict.fromkeys(hosts), 2))


def common_to_bad(cells: dict[tuple[str, str], Outcome]) -> str | None:
    """The host every pair that fell short involves, when at least two fell short and one
    host is in all of them: where to look first."""
    bad = [pair for pair, o in cells.items() if o.verdict.status.rank > 0]
    if len(bad) < 2:
        return None
    common = set(bad[0]).intersection(*map(set, bad[1:]))
    return next(iter(sorted(common))) if len(common) == 1 else None


@dataclass
class Matrix:
    hosts: list[str]
    cells: dict[tuple[str, str], Outcome]

    def cell(self, sender: str, receiver: str) -> Outcome | None:
        return self.cells.get((sender, receiver))


async def run_matrix(
    hosts: list[str], run_pair: PairRunner, on_cell: CellDone | None = None, ordered: bool = False
) -> Matrix:
    """Test every pair, one at a time (concurrent tests would measure each other)."""
    matrix = Matrix(list(dict.fromkeys(hosts)), {})
    for src, dst in matrix_pairs(hosts, ordered):
        outcome = await run_pair(src, dst)
        matrix.cells[(src, dst)] = outcome
        if on_cell is not None:
            on_cell(src, dst, outcome)
    return matrix


def _retransmits(r: TestResult) -> int | None:
    known = [v for v in (r.forward_retransmits, r.reverse_retransmits) if v is not None]
    return sum(known) if known else None


def _pair(
    key: str, what: str, src: Callable[[TestResult], object], dst: Callable[[TestResult], object]
) -> Field[Outcome]:
    """An object of one figure for each end: {"src": ..., "dst": ...}."""
    types = ("number", "null") if key == "cpu" else ("string", "null")
    ends: tuple[Field[TestResult], ...] = (
        Field("src", types, f"SRC's {what}", src),
        Field("dst", types, f"DST's {what}", dst),
    )
    return Field(key, ("object",), f"each end's {what}", lambda o: o.result, of=ends)


_COUNTERS = {
    "src_tx": "SRC's interface sent",
    "src_rx": "SRC's interface received",
    "dst_tx": "DST's interface sent",
    "dst_rx": "DST's interface received",
}


def _counter(key: str) -> Field[TestResult]:
    return Field(key, ("number", "null"), f"{_COUNTERS[key]}, bit/s", lambda r: r.counters_bps.get(key))


# The document of `test --json` (documented in docs/TESTS.md). ``retransmits`` counts both
# directions; ``forward_pct`` and ``reverse_pct`` are each direction's percentage of
# ``expected_bps``, the one base (``pct_of_expected`` is the lower of the two).
TEST_JSON: tuple[Field[Outcome], ...] = (
    Field("src", ("string",), "the host the test ran from (iperf3's client, SRC)", lambda o: o.result.src),
    Field("dst", ("string",), "the host it tested to (DST)", lambda o: o.result.dst),
    Field("address", ("string",), "DST's address the test was sent to", lambda o: o.result.address),
    Field("duration_s", ("number",), "seconds iperf3 ran", lambda o: o.result.duration_s),
    Field(
        "forward_bps", ("number", "null"), "goodput SRC → DST, bit/s at the receiver", lambda o: o.result.forward_bps
    ),
    Field(
        "reverse_bps", ("number", "null"), "goodput DST → SRC, bit/s at the receiver", lambda o: o.result.reverse_bps
    ),
    Field("retransmits", ("integer", "null"), "both directions' retransmits", lambda o: _retransmits(o.result)),
    Field("forward_retransmits", ("integer", "null"), "retransmits SRC → DST", lambda o: o.result.forward_retransmits),
    Field("reverse_retransmits", ("integer", "null"), "retransmits DST → SRC", lambda o: o.result.reverse_retransmits),
    Field("rtt_ms", ("number", "null"), "mean of the sending streams' mean RTT, ms", lambda o: o.result.rtt_ms),
    _pair("cpu", "CPU during the test, % (iperf3's host_total)", lambda r: r.cpu_src_pct, lambda r: r.cpu_dst_pct),
    Field(
        "expected_bps",
        ("number", "null"),
        "what a clean path between the ends carries, bit/s; null when a link speed is unknown",
        lambda o: o.verdict.expected_bps,
    ),
    Field(
        "pct_of_expected",
        ("number", "null"),
        "the lower of forward_pct and reverse_pct",
        lambda o: o.verdict.pct_of_expected,
    ),
    Field(
        "forward_pct",
        ("number", "null"),
        "forward_bps as a percentage of expected_bps",
        lambda o: direction_pcts(o.result, o.verdict)[0],
    ),
    Field(
        "reverse_pct",
        ("number", "null"),
        "reverse_bps as a percentage of expected_bps",
        lambda o: direction_pcts(o.result, o.verdict)[1],
    ),
    Field("verdict", ("string",), "ok, degraded, bad or error", lambda o: o.verdict.status),
    Field(
        "conditions",
        ("array",),
        "What kept the test from measuring the path alone (SHARED_PATH: other traffic crossed an end's interface "
        "during it), said before any cause; same shape as causes.",
        lambda o: o.verdict.conditions,
        of=CAUSE_JSON,
    ),
    Field("causes", ("array",), "why the verdict is what it is", lambda o: o.verdict.causes, of=CAUSE_JSON),
    Field(
        "counters_bps",
        ("object",),
        "the ends' interface counters over the test, read just before and just after it",
        lambda o: o.result,
        of=tuple(_counter(k) for k in _COUNTERS),
    ),
    Field(
        "path_mtu",
        ("object",),
        "the largest IP packet each end's ping got through with don't-fragment, each way",
        lambda o: o.result.path_mtu,
        of=PATH_MTU_JSON,
    ),
    _pair("iperf3_version", "iperf3 version", lambda r: r.src_iperf3, lambda r: r.dst_iperf3),
    Field("streams", ("integer",), "parallel streams each way (iperf3 -P)", lambda o: o.result.streams),
    Field(
        "intervals",
        ("array",),
        "each second as SRC's iperf3 reported it (--json-stream, iperf3 3.17 and newer; else empty): start_s, end_s, "
        "forward_bps, reverse_bps, forward_retransmits, reverse_retransmits, rtt_ms, cwnd_bytes",
        lambda o: [dict(i) for i in o.result.intervals],
        items="object",
    ),
    Field(
        "alone",
        ("object", "null"),
        "each direction run alone after a --bidir test fell short with no cause but its shape: forward_bps, "
        "reverse_bps, duration_s; null when not run",
        lambda o: dict(o.result.alone) if o.result.alone is not None else None,
    ),
    Field("iperf3", ("object",), "iperf3's own end section, as it printed it", lambda o: dict(o.result.raw_end)),
    Field("error", ("string",), "why the test failed; only there when it did", lambda o: o.result.error, when_set=True),
)


def outcome_json(o: Outcome) -> dict:
    """The JSON of ``linkdeck test --json``: TEST_JSON."""
    return write(o, TEST_JSON)


def path_mtu_json(p: PathMtu | None) -> dict:
    """Largest IP packet (bytes) through each way; null when not probed, "note" says why."""
    return write(p, PATH_MTU_JSON)


# A matrix's cell: a test's object without iperf3's own section.
CELL_JSON = without(TEST_JSON, "iperf3")
MATRIX_JSON: tuple[Field[Matrix], ...] = (
    Field("hosts", ("array",), "the hosts, in the order given", lambda m: m.hosts, items="string"),
    Field(
        "cells",
        ("array",),
        "one test per pair, in the order run, each as test --json without iperf3",
        lambda m: m.cells.values(),
        of=CELL_JSON,
    ),
)


def matrix_json(m: Matrix) -> dict:
    return write(m, MATRIX_JSON)


CSV_FIELDS = (
    "sender",
    "receiver",
    "forward_bps",
    "reverse_bps",
    "forward_retransmits",
    "reverse_retransmits",
    "expected_bps",
    "pct_of_expected",
    "forward_pct",
    "reverse_pct",
    "verdict",
    "summary",
)


def matrix_csv(m: Matrix) -> str:
    """One row per ordered pair: the sender is the iperf3 client, forward is sender → receiver."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_FIELDS)
    for (src, dst), o in m.cells.items():
        r, v = o.result, o.verdict
        forward_pct, reverse_pct = direction_pcts(r, v)
        writer.writerow(
            [
                src,
                dst,
                _num(r.forward_bps),
                _num(r.reverse_bps),
                _num(r.forward_retransmits),
                _num(r.reverse_retransmits),
                _num(v.expected_bps),
                _num(v.pct_of_expected, 1),
                _num(forward_pct, 1),
                _num(reverse_pct, 1),
                v.status,
                v.summary,
            ]
        )
    return out.getvalue()


def _num(value: float | int | None, digits: int = 0) -> str:
    if value is None:
        return ""
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)
