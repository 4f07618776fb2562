"""A recording played back: every raw read goes through a fresh adapter's own parser and the
collector's rate step (``collector.sample_changes``), so a replay shows what live showed, and a
parser fixed since shows better.

``Player`` moves forward event by event (``step``) or to a time (``advance_to``); going back
means a new Player played up to the earlier time, which is fast (parsing is the only work).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..addresses import ip_text
from ..collector import Stream, sample_changes
from ..config import UNITS, MuteRule, Settings, Thresholds
from ..diagnose import Diagnoser
from ..limits import out_of_range
from ..model import HostState, HostUpdate
from ..platforms.base import Adapter
from ..platforms.detect import UnsupportedOS, make_adapter
from ..platforms.local import LocalAdapter
from .fileformat import Recording


def settings_from_json(data: dict) -> Settings:
    """The recorded settings that change what a replay computes (interval, speed overrides,
    thresholds, mutes). A recording is input like a config file: each value goes through the
    same ranges (limits.py), and anything missing, mistyped or out of range stays at its
    default."""
    base = Settings()
    values: dict = {}
    for key in ("interval", "facts_every"):
        if out_of_range(key, data.get(key)) is None:
            values[key] = data[key]
    if data.get("units") in UNITS:
        values["units"] = data["units"]
    if isinstance(data.get("speed_overrides"), dict):
        values["speed_overrides"] = {str(k): v for k, v in data["speed_overrides"].items() if out_of_range("speed_mbps", v) is None}
    th = data.get("thresholds")
    if isinstance(th, dict):
        values["thresholds"] = Thresholds(**{k: float(v) for k, v in th.items() if k in Thresholds.__dataclass_fields__ and out_of_range(k, v) is None})
    if isinstance(data.get("mute"), list):
        values["mute"] = tuple(
            MuteRule(**{k: m.get(k) if isinstance(m.get(k), str) else None for k in ("code", "host", "interface")}) for m in data["mute"] if isinstance(m, dict)
        )
    return replace(base, **values)


def replay_adapter(os_name: str | None, os_detail: str | None, via: str, settings: Settings) -> Adapter | None:
    """A reader for one host's recorded reads, with no connection behind it; None for an OS
    this linkdeck has no parser for."""
    if via == "psutil":
        return LocalAdapter(None, os_name, os_detail, settings.facts_every)
    try:
        return make_adapter(None, os_name or "", os_detail, settings)
    except UnsupportedOS:
        return None


@dataclass
class Track:
    """One host as the replay has it so far."""

    last: HostUpdate
    adapter: Adapter | None = None
    stream: Stream = field(default_factory=Stream)
    samples: int = 0


class Player:
    def __init__(self, recording: Recording, settings: Settings | None = None) -> None:
        self.recording = recording
        self.settings = settings or settings_from_json(recording.header.get("settings") or {})
        self.now = recording.start
        self.pos = 0
        self.tracks: dict[str, Track] = {}
        for h in recording.header.get("hosts") or []:
            if isinstance(h, dict) and isinstance(h.get("name"), str):
                self._track(h["name"], h.get("os"), h.get("os_detail"))
        self.diagnoser = Diagnoser(self.settings, clock=lambda: self.now)
        self.tests: list[dict] = []  # the recorded "test" events so far
        self.findings_log: list[dict] = []  # the recorded "finding" events so far

    def _track(self, host: str, os_name: str | None = None, os_detail: str | None = None) -> Track:
        track = self.tracks.get(host)
        if track is None:
            track = self.tracks[host] = Track(HostUpdate(host=host, os=os_name, os_detail=os_detail, state=HostState.CONNECTING))
        return track

    @property
    def done(self) -> bool:
        return self.pos >= len(self.recording.events)

    def step(self) -> list[HostUpdate]:
        """Play the next event; the host updates it made."""
        event = self.recording.events[self.pos]
        self.pos += 1
        self.now = float(event["t"])
        update = self._apply(event)
        if update is None:
            return []
        self.diagnoser.observe(update)
        return [update]

    def advance_to(self, when: float) -> list[HostUpdate]:
        out: list[HostUpdate] = []
        while not self.done and float(self.recording.events[self.pos]["t"]) <= when:
            out += self.step()
        self.now = max(self.now, min(when, self.recording.end))
        return out

    def updates(self) -> list[HostUpdate]:
        return [t.last for t in self.tracks.values()]

    def _apply(self, event: dict) -> HostUpdate | None:
        kind, host = event.get("ev"), event.get("h")
        if kind == "test":
            self.tests.append(event)
        elif kind == "finding":
            self.findings_log.append(event)
        if not isinstance(host, str):
            return None
        track = self._track(host)
        if kind == "open":
            track.adapter = replay_adapter(event.get("os"), event.get("os_detail"), event.get("via", "sh"), self.settings)
            track.stream = Stream()
            reached = event.get("reached_at")
            changes: dict = {
                "os": event.get("os"), "os_detail": event.get("os_detail"), "error": None, "detail": {},
                "reached_at": ip_text(reached) if isinstance(reached, str) else None,
            }  # fmt: skip
            if track.adapter is None:
                changes.update(state=HostState.ERROR, error=f"recorded OS {event.get('os')!r}: this linkdeck has no parser for it")
        elif kind in ("read", "prime"):
            if track.adapter is None:
                return None
            item = track.adapter.replayed(event, float(event["t"]))
            if kind == "prime":
                track.stream.restore(event.get("stream"))
                return None  # it only brings the parser and the cost up to where live was
            changes = sample_changes(item, track.stream, host, self.settings, float(event["t"]))
            track.samples += changes["state"] == HostState.LIVE
        elif kind == "state":
            try:
                state = HostState(event.get("state"))
            except ValueError:
                return None
            detail = event.get("detail")
            changes = {"state": state, "error": event.get("error"), "detail": detail if isinstance(detail, dict) else {}}
        else:
            return None
        track.last = replace(track.last, **changes)
        return track.last
