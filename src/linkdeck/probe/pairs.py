"""Every pair of hosts, one test after another, and the exports: the JSON of one test
(``linkdeck test --json``), the matrix as JSON and CSV. Each test runs both directions, so
each pair is tested once unless both orders are asked for."""

from __future__ import annotations

import csv
import io
import itertools
from dataclasses import dataclass
from typing import Awaitable, Callable

from ..core.jsonfields import write
from ..core.model import PATH_MTU_JSON, PathMtu, TestResult
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


def outcome_json(o: Outcome) -> dict:
    """The JSON of ``linkdeck test --json`` (documented in docs/JSON.md);
    ``retransmits`` counts both directions, ``forward_retransmits`` and ``reverse_retransmits``
    each; ``forward_pct`` and ``reverse_pct`` are each direction's percentage of
    ``expected_bps``, the one base (``pct_of_expected`` is the lower of the two)."""
    r, v = o.result, o.verdict
    forward_pct, reverse_pct = direction_pcts(r, v)
    return {
        "src": r.src,
        "dst": r.dst,
        "address": r.address,
        "duration_s": r.duration_s,
        "forward_bps": r.forward_bps,
        "reverse_bps": r.reverse_bps,
        "retransmits": _retransmits(r),
        "forward_retransmits": r.forward_retransmits,
        "reverse_retransmits": r.reverse_retransmits,
        "rtt_ms": r.rtt_ms,
        "cpu": {"src": r.cpu_src_pct, "dst": r.cpu_dst_pct},
        "expected_bps": v.expected_bps,
        "pct_of_expected": v.pct_of_expected,
        "forward_pct": forward_pct,
        "reverse_pct": reverse_pct,
        "verdict": v.status,
        "conditions": [c.as_dict() for c in v.conditions],
        "causes": [c.as_dict() for c in v.causes],
        "counters_bps": {k: r.counters_bps.get(k) for k in ("src_tx", "src_rx", "dst_tx", "dst_rx")},
        "path_mtu": path_mtu_json(r.path_mtu),
        "iperf3_version": {"src": r.src_iperf3, "dst": r.dst_iperf3},
        "streams": r.streams,
        "intervals": [dict(i) for i in r.intervals],
        "alone": dict(r.alone) if r.alone is not None else None,
        "iperf3": dict(r.raw_end),
        **({"error": r.error} if r.error else {}),
    }


def path_mtu_json(p: PathMtu | None) -> dict:
    """Largest IP packet (bytes) through each way; null when not probed, "note" says why."""
    return write(p, PATH_MTU_JSON)


def matrix_json(m: Matrix) -> dict:
    cells = []
    for o in m.cells.values():
        cell = outcome_json(o)
        cell.pop("iperf3")
        cells.append(cell)
    return {"hosts": m.hosts, "cells": cells}


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
