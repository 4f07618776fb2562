"""`linkdeck record`'s findings: judged on a worker thread (at 10,000 hosts a pass would hold
up the loop every host's collector runs in for half a second), written as events."""

from __future__ import annotations

import functools
import threading

from linkdeck.collector import Fleet
from linkdeck.commands import record as record_command
from linkdeck.config import HostSpec, Settings
from linkdeck.diagnose import Diagnoser
from linkdeck.recording.fileformat import read
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
    await record_command.record(path, Settings(interval=0.2, local=False), [HostSpec("syn", address="syn.invalid")], duration=2.5)
    found = [e for e in read(path).events() if e.get("ev") == "finding"]
    assert [(e["code"], e["host"], e["interface"], e["on"]) for e in found] == [("HALF_DUPLEX", "syn", "eth1", True)]
    assert judged_on and threading.main_thread().ident not in judged_on
