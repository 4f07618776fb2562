"""`linkdeck record`'s findings: judged on a worker thread (at 10,000 hosts a pass would hold
up the loop every host's collector runs in for half a second), written as events."""

from __future__ import annotations

import functools
import threading

from linkdeck.commands import record as record_command
from linkdeck.findings.engine import Diagnoser
from linkdeck.fleet.collector import Fleet
from linkdeck.recording.fileformat import read
from linkdeck.settings.config import HostSpec, Settings
from tests.synthetic import SyntheticAdapter, opener_for, physical


async def test_a_recordings_findings_are_judged_off_the_loop_and_written(tmp_path, monkeypatch) -> None:
    adapter = SyntheticAdapter([physical("eth0"), physical("eth1", 100, duplex="half")])
    monkeypatch.setattr(record_command, "Fleet", functools.partial(Fleet, opener=opener_for({"syn": adapter})))
    judged_on: list[int] = []
    judge = Diagnoser.judge

    def spied(self, view):
        judged_on.append(threading.get_ident())
        return judge(self, view)

    monkeypatch.setattr(Diagnoser, "judge", spied)
    path = tmp_path / "syn.ldrec"
    await record_command.record(
        path, Settings(interval=0.2, local=False), [HostSpec("syn", address="syn.invalid")], duration=2.5
    )
    found = [e for e in read(path).events() if e.get("ev") == "finding"]
    assert [(e["code"], e["host"], e["interface"], e["on"]) for e in found] == [("HALF_DUPLEX", "syn", "eth1", True)]
    assert judged_on and threading.main_thread().ident not in judged_on


async def test_a_recording_judges_its_findings_only_when_updates_came(tmp_path, monkeypatch) -> None:
    """A pass every second whatever came: at 10,000 Prometheus hosts, whose updates come once
    per 15 s interval, 0.6 s of CPU each second. Here nothing comes after the start."""
    passes: list[int] = []
    judge = Diagnoser.judge

    def counted(self, view):
        passes.append(len(view.states))
        return judge(self, view)

    monkeypatch.setattr(Diagnoser, "judge", counted)
    await record_command.record(tmp_path / "quiet.ldrec", Settings(interval=0.2, local=False), [], duration=3.5)
    assert passes == [0]  # the start's, then none
