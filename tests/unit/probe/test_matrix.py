"""The matrix: every ordered pair once, in order, and its JSON / CSV / grid exports."""

from __future__ import annotations

import asyncio
import csv
import io

from linkdeck.commands.matrix import grid_text
from linkdeck.core import model
from linkdeck.core.levels import Status
from linkdeck.core.model import Cause, EndState, Verdict
from linkdeck.probe import Outcome, matrix_csv, matrix_json, ordered_pairs, outcome_json, run_matrix


def outcome(
    src: str, dst: str, fwd: float | None, rev: float | None, pct: float | None, status: str, retr=(0, 3), error=None
) -> Outcome:
    result = model.TestResult(
        src=src,
        dst=dst,
        address=f"10.0.0.{len(dst)}",
        duration_s=3.0,
        forward_bps=fwd,
        reverse_bps=rev,
        forward_retransmits=retr[0],
        reverse_retransmits=retr[1],
        rtt_ms=0.2,
        cpu_src_pct=40.0,
        cpu_dst_pct=30.0,
        error=error,
        raw_end={"sum_sent": {"bytes": 1}},
        counters_bps={"src_tx": 9.5e8, "src_rx": 9.4e8, "dst_tx": 9.4e8, "dst_rx": 9.5e8},
    )
    causes = (Cause("RETRANSMITS", "retransmits b→a", "3 retransmits"),) if status == "degraded" else ()
    verdict = Verdict(Status(status), 9.41e8 if pct is not None else None, pct, causes, "summary text")
    return Outcome(result, EndState(src), EndState(dst), verdict)


def test_ordered_pairs_are_every_sender_receiver_once() -> None:
    assert ordered_pairs(["a", "b", "c", "a"]) == [
        ("a", "b"),
        ("a", "c"),
        ("b", "a"),
        ("b", "c"),
        ("c", "a"),
        ("c", "b"),
    ]


async def test_run_matrix_runs_pairs_one_after_another() -> None:
    running: list[tuple[str, str]] = []
    done: list[tuple[str, str]] = []

    async def run_pair(src: str, dst: str) -> Outcome:
        assert not running, "two tests at once"
        running.append((src, dst))
        await asyncio.sleep(0.01)
        running.pop()
        return outcome(src, dst, 9e8, 8e8, 95.6, "ok")

    m = await run_matrix(["x", "y", "z"], run_pair, on_cell=lambda s, d, o: done.append((s, d)))
    # each test measures both directions: each pair once, the first named sending first
    assert list(m.cells) == done == [("x", "y"), ("x", "z"), ("y", "z")]
    assert m.cell("z", "x") is None and m.cell("x", "x") is None
    both = await run_matrix(["x", "y", "z"], run_pair, ordered=True)
    assert list(both.cells) == ordered_pairs(["x", "y", "z"]) and both.cell("z", "x").result.src == "z"


def test_a_host_common_to_every_bad_pair_is_named() -> None:
    from linkdeck.probe.pairs import common_to_bad

    ok = outcome("a", "c", 9e8, 8e8, 95.6, "ok")
    bad = {
        ("a", "b"): outcome("a", "b", 9e7, 8e7, 9.5, "bad"),
        ("b", "c"): outcome("b", "c", 9e7, 8e7, 9.5, "degraded"),
        ("a", "c"): ok,
    }
    assert common_to_bad(bad) == "b"
    assert (
        common_to_bad({**bad, ("a", "c"): outcome("a", "c", 9e7, 8e7, 9.5, "bad")}) is None
    )  # no one host in all three
    assert common_to_bad({("a", "b"): bad[("a", "b")], ("a", "c"): ok}) is None  # one bad pair: nothing to compare


def test_outcome_json_has_the_documented_fields() -> None:
    doc = outcome_json(outcome("a", "b", 9.0e8, 8.5e8, 90.3, "degraded", retr=(2, 5)))
    assert list(doc) == [
        "src",
        "dst",
        "address",
        "duration_s",
        "forward_bps",
        "reverse_bps",
        "retransmits",
        "forward_retransmits",
        "reverse_retransmits",
        "rtt_ms",
        "cpu",
        "expected_bps",
        "pct_of_expected",
        "forward_pct",
        "reverse_pct",
        "verdict",
        "conditions",
        "causes",
        "counters_bps",
        "path_mtu",
        "iperf3_version",
        "streams",
        "intervals",
        "alone",
        "iperf3",
    ]
    # each direction's percentage of expected_bps (9.41e8), and both retransmit counts
    assert (round(doc["forward_pct"], 1), round(doc["reverse_pct"], 1)) == (95.6, 90.3)
    assert (doc["forward_retransmits"], doc["reverse_retransmits"]) == (2, 5)
    assert doc["path_mtu"] == {"forward": None, "reverse": None}  # not probed
    assert doc["retransmits"] == 7 and doc["cpu"] == {"src": 40.0, "dst": 30.0}
    assert doc["causes"] == [{"code": "RETRANSMITS", "message": "retransmits b→a", "evidence": "3 retransmits"}]
    assert doc["counters_bps"] == {"src_tx": 9.5e8, "src_rx": 9.4e8, "dst_tx": 9.4e8, "dst_rx": 9.5e8}
    assert doc["iperf3"] == {"sum_sent": {"bytes": 1}}
    failed = outcome_json(
        outcome("a", "b", None, None, None, "error", retr=(None, None), error="iperf3 not found on b")
    )
    assert (failed["verdict"], failed["error"], failed["retransmits"]) == ("error", "iperf3 not found on b", None)


def test_matrix_csv_and_json_and_grid() -> None:
    from linkdeck.probe import Matrix

    m = Matrix(
        ["a", "b"],
        {
            ("a", "b"): outcome("a", "b", 9.27e8, 9.0e8, 98.5, "ok", retr=(0, 4)),
            ("b", "a"): outcome("b", "a", None, None, None, "error", retr=(None, None), error="b: unreachable"),
        },
    )
    rows = list(csv.DictReader(io.StringIO(matrix_csv(m))))
    assert rows[0] == {
        "sender": "a",
        "receiver": "b",
        "forward_bps": "927000000",
        "reverse_bps": "900000000",
        "forward_retransmits": "0",
        "reverse_retransmits": "4",
        "expected_bps": "941000000",
        "pct_of_expected": "98.5",
        "forward_pct": "98.5",
        "reverse_pct": "95.6",
        "verdict": "ok",
        "summary": "summary text",
    }
    assert (rows[1]["sender"], rows[1]["verdict"], rows[1]["forward_bps"]) == ("b", "error", "")
    doc = matrix_json(m)
    assert doc["hosts"] == ["a", "b"] and len(doc["cells"]) == 2 and "iperf3" not in doc["cells"][0]
    grid = grid_text(m).splitlines()
    assert grid[0].split() == ["sender", "\\", "receiver", "a", "b"]
    # each rate beside its own percentage of expected, both directions, both retransmit counts
    assert grid[1].split() == ["a", "—", "927M", "99%", "/", "900M", "96%", "r0/4"]
    assert grid[3].startswith("each cell: sender → receiver rate and % of expected")
    assert grid[2].split() == ["b", "error", "—"]
