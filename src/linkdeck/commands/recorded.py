"""What the commands that read a recording share: opening it (one line on error) and the
times a user names in it (``--at``)."""

from __future__ import annotations

import datetime as dt
import re
import sys

from ..core.codes import Code
from ..core.levels import Severity, Status
from ..core.model import Cause, EndState, Finding, PathMtu, TestResult, Verdict
from ..core.rawjson import interface_from_json
from ..recording.fileformat import Recording, RecordingError, read

_OFFSET = re.compile(r"^([+-])?(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s?)?$")
_CLOCK = re.compile(r"^(\d{1,2}):(\d{2})(?::(\d{2}(?:\.\d+)?))?$")


def open_recording(path: str) -> Recording | None:
    """The recording, or None after printing why it cannot be read (one line on stderr) and a
    note when it was cut short."""
    try:
        recording = read(path)
    except RecordingError as exc:
        print(f"linkdeck: {exc}", file=sys.stderr)
        return None
    if recording.truncated:
        print(
            f"linkdeck: note: {path} ends without its end mark (linkdeck was killed, or the file was cut): "
            f"it is read up to {clock(recording.end)}",
            file=sys.stderr,
        )
    return recording


def say_damage(recording: Recording) -> None:
    """One line on stderr per kind of damage met while reading the recording (unreadable
    bytes, skipped lines, times out of order): nothing is lost silently."""
    for note in recording.damage.notes():
        print(f"linkdeck: note: {recording.path}: {note}", file=sys.stderr)


def clock(when: float) -> str:
    """A wall-clock time as the user's local date and time, to the second."""
    return dt.datetime.fromtimestamp(when).strftime("%Y-%m-%d %H:%M:%S")


def parse_at(text: str, recording: Recording) -> float:
    """A time in the recording: seconds from its start (``90``, ``1m30s``, ``+2h``), from
    its end (``-30s``), a clock time on the day it started (``14:05``, ``14:05:30``), or an ISO
    date and time. ValueError saying what was expected and the recording's span."""
    start, end = recording.start, recording.end
    span = f"the recording runs from {clock(start)} to {clock(end)} ({end - start:.0f} s)"
    text = text.strip()
    when = _when(text, start, end)
    if when is None:
        raise ValueError(
            f"--at {text!r}: give seconds from the start (90, 1m30s), "
            f"from the end (-30s), a time of day (14:05:30) or an ISO date-time; {span}"
        )
    if not start - 1e-3 <= when <= end + 1e-3:
        raise ValueError(f"--at {text!r} is {clock(when)}, outside the recording: {span}")
    return min(max(when, start), end)


def _when(text: str, start: float, end: float) -> float | None:
    m = _OFFSET.match(text)
    if text and m and any(m.group(i) for i in (2, 3, 4)):
        seconds = float(m.group(2) or 0) * 3600 + float(m.group(3) or 0) * 60 + float(m.group(4) or 0)
        return end - seconds if m.group(1) == "-" else start + seconds
    m = _CLOCK.match(text)
    if m:
        day = dt.datetime.fromtimestamp(start)
        hour, minute, second = int(m.group(1)), int(m.group(2)), float(m.group(3) or 0)
        if hour > 23 or minute > 59 or second >= 60:
            return None
        when = day.replace(hour=hour, minute=minute, second=0, microsecond=0).timestamp() + second
        return when + 86400 if when < start - 1 else when  # past midnight: the next day
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment.timestamp()


def outcome_from_json(data: dict):
    """A recorded test's Outcome (``probe.Outcome`` as the recorder wrote it), for the words
    present.py gives it live. KeyError/TypeError/ValueError on a damaged entry."""
    from ..probe.watched import Outcome

    r = dict(data["result"])
    if isinstance(r.get("path_mtu"), dict):
        r["path_mtu"] = PathMtu(**{k: v for k, v in r["path_mtu"].items() if k in PathMtu.__dataclass_fields__})
    result = TestResult(**{k: v for k, v in r.items() if k in TestResult.__dataclass_fields__})
    v = dict(data["verdict"])
    causes = tuple(_cause(c) for c in v.pop("causes", ()))
    conditions = tuple(_cause(c) for c in v.pop("conditions", ()))
    v["status"] = Status.of(v["status"])
    verdict = Verdict(
        **{k: x for k, x in v.items() if k in Verdict.__dataclass_fields__}, causes=causes, conditions=conditions
    )
    return Outcome(result, _end(data["src"]), _end(data["dst"]), verdict, data.get("src_iface"), data.get("dst_iface"))


def _cause(data: dict) -> Cause:
    return Cause(**{**data, "code": Code.read(data["code"])})


def _end(data: dict) -> EndState:
    findings = tuple(
        Finding(**{**f, "code": Code.read(f["code"]), "severity": Severity.of(f["severity"])})
        for f in data.get("findings", ())
    )
    iface = interface_from_json(data["iface"]) if data.get("iface") else None
    return EndState(data["host"], iface, data.get("errors_during"), data.get("drops_during"), findings)
