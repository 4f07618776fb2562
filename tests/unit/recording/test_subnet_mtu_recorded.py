"""A recording carries the subnets' MTU probes (``subnet_mtu`` events, repeated at each
checkpoint), so a replay, ``report`` and ``snapshot --from`` judge MTU_MISMATCH as live did; a
finding raised again with a new severity or hint keeps its span and takes the new words.

The recordings here are CONSTRUCTED: no host, the real Recorder with a clock of our own."""

from __future__ import annotations

from pathlib import Path

from linkdeck.core.codes import Code
from linkdeck.core.levels import Severity
from linkdeck.core.model import Finding, SubnetMtu
from linkdeck.recording.fileformat import read
from linkdeck.recording.recorder import CHECKPOINT_S, Recorder
from linkdeck.recording.replay import Player
from linkdeck.recording.timeline import build
from linkdeck.settings.config import Settings

T0 = 1_795_400_000.0
SUBNET = "10.77.90.0/24"
PROBED = SubnetMtu(SUBNET, (1500, 9000), ("c", "g"), 1500)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


def mismatch(severity: Severity, evidence: str, hint: str) -> Finding:
    return Finding(Code.MTU_MISMATCH, severity, "c", "eth0", f"{severity.value} words", evidence, hint)


def test_a_finding_raised_again_with_a_new_severity_or_hint_keeps_its_span_and_takes_the_new_words(
    tmp_path: Path,
) -> None:
    clock = Clock()
    rec = Recorder(tmp_path / "r.ldrec", Settings(), [], clock)
    unprobed = mismatch(Severity.WARNING, "which MTU it carries is not probed yet", "until then does not say")
    blamed = mismatch(Severity.ERROR, "largest packet through: 1500 bytes", "the subnet carries 1500")
    for t, findings in ((1, [unprobed]), (2, [unprobed]), (3, [blamed]), (4, [blamed]), (9, [])):
        clock.now = T0 + t
        rec.findings(findings)
    clock.now = T0 + 10
    rec.close()
    recording = read(tmp_path / "r.ldrec")
    written = [(e["t"] - T0, e["on"], e.get("severity")) for e in recording.events() if e["ev"] == "finding"]
    assert written == [(1, True, "warning"), (3, True, "error"), (9, False, None)]
    (span,) = build(recording).findings
    assert (span.since - T0, span.until - T0 if span.until else None) == (1, 9)
    assert (span.severity, span.evidence, span.hint) == ("error", blamed.evidence, blamed.hint)


def test_figures_alone_changing_write_no_new_finding(tmp_path: Path) -> None:
    clock = Clock()
    rec = Recorder(tmp_path / "r.ldrec", Settings(), [], clock)
    for t, rate in ((1, "2/s"), (2, "3/s")):
        clock.now = T0 + t
        rec.findings([Finding(Code.ERRORS_RISING, Severity.WARNING, "c", "eth0", rate, rate, "swap the cable")])
    rec.close()
    assert [e["ev"] for e in read(tmp_path / "r.ldrec").events()].count("finding") == 1


def test_a_recorded_subnet_probe_is_learnt_by_a_replay_from_the_start_and_from_a_checkpoint(tmp_path: Path) -> None:
    clock = Clock()
    rec = Recorder(tmp_path / "r.ldrec", Settings(), [], clock)
    clock.now = T0 + 1
    rec.subnet_mtu(PROBED)
    unprobed = SubnetMtu("10.77.91.0/24", (1500, 9000), ("c", "x"), None, "x is not watched over SSH")
    rec.subnet_mtu(unprobed)
    for t in (CHECKPOINT_S + 5, 2 * CHECKPOINT_S + 5):  # each finding pass past a checkpoint time
        clock.now = T0 + t
        rec.findings([])
    rec.close()
    recording = read(tmp_path / "r.ldrec")
    assert len(recording.checkpoints) >= 2

    whole = Player(recording)
    while not whole.done:
        whole.step()
    # once each, though every checkpoint repeats them
    assert whole.learnt == [PROBED, unprobed]
    assert whole.diagnoser is not None and whole.diagnoser.subnet_mtu == {SUBNET: PROBED, unprobed.subnet: unprobed}

    jumped = Player.at(recording, recording.end, diagnose=False)
    assert jumped.probed == {SUBNET: PROBED, unprobed.subnet: unprobed}
    early = Player.at(recording, T0 + 0.5, diagnose=False)
    assert early.probed == {}


def test_a_probe_still_waiting_for_its_timeouts_does_not_hold_up_ctrl_c_or_the_end() -> None:
    import asyncio
    import time

    from linkdeck.commands.record import _unless_stopped

    cancelled: list[bool] = []

    async def slow() -> str:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return "late"

    async def go() -> tuple:
        stop = asyncio.Event()
        asyncio.get_running_loop().call_later(0.1, stop.set)
        started = time.monotonic()
        by_stop = await _unless_stopped(slow(), stop, None)
        by_end = await _unless_stopped(slow(), asyncio.Event(), time.monotonic() + 0.1)
        answered = await _unless_stopped(asyncio.sleep(0, "now"), asyncio.Event(), time.monotonic() + 5)
        return by_stop, by_end, answered, time.monotonic() - started

    by_stop, by_end, answered, took = asyncio.run(go())
    assert (by_stop, by_end, answered, cancelled) == (None, None, "now", [True, True])
    assert took < 2
