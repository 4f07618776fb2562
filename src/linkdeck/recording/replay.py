"""A recording played back: every raw read goes through a fresh adapter's own parser and the
collector's rate step (``collector.sample_changes``), so a replay shows what live showed, and a
parser fixed since shows better.

``Player`` streams the events (the recording is never held in memory) and moves forward event
by event (``step``) or to a time (``advance_to``); going anywhere else is ``Player.at``, which
starts from the recording's checkpoint before that time (docs/RECORDING.md).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field, replace
from typing import Callable

from ..core.addresses import ip_text
from ..core.model import NO_DETAIL, HostDetail, HostState, HostUpdate, SubnetMtu
from ..findings.engine import Diagnoser
from ..fleet.collector import Stream, sample_changes
from ..platforms.adapter import Adapter
from ..platforms.detect import UnsupportedOS, make_adapter
from ..platforms.psutil_adapter import LocalAdapter
from ..settings.config import UNITS, MuteRule, Settings, Thresholds
from ..settings.limits import RANGES, out_of_range
from .fileformat import Recording
from .own import TEST_SETUP_S, OwnTraffic
from .tests_ahead import TestsAhead

# How far ahead a replay looks for the event of a test already running: the longest test a
# user can ask for and its setup.
OWN_AHEAD_S = RANGES["test_duration"].hi + TEST_SETUP_S


def subnet_mtu_from_json(event: dict) -> SubnetMtu | None:
    """A ``subnet_mtu`` event's probe (None when it is not one this linkdeck can read)."""
    subnet, mtus, between = event.get("subnet"), event.get("mtus"), event.get("between")
    largest, note = event.get("largest"), event.get("note")
    if (
        not isinstance(subnet, str)
        or not isinstance(mtus, list)
        or not all(isinstance(m, int) for m in mtus)
        or not isinstance(between, list)
        or len(between) != 2
        or not all(isinstance(h, str) for h in between)
        or not (largest is None or isinstance(largest, int))
        or not (note is None or isinstance(note, str))
    ):
        return None
    return SubnetMtu(subnet, tuple(mtus), (between[0], between[1]), largest, note)


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
        values["speed_overrides"] = {
            str(k): v for k, v in data["speed_overrides"].items() if out_of_range("speed_mbps", v) is None
        }
    th = data.get("thresholds")
    if isinstance(th, dict):
        values["thresholds"] = Thresholds(
            **{
                k: float(v)
                for k, v in th.items()
                if k in Thresholds.__dataclass_fields__ and out_of_range(k, v) is None
            }
        )
    if isinstance(data.get("mute"), list):
        values["mute"] = tuple(
            MuteRule(**{k: m.get(k) if isinstance(m.get(k), str) else None for k in ("code", "host", "interface")})
            for m in data["mute"]
            if isinstance(m, dict)
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


def default_lead(settings: Settings) -> float:
    """How much of a recording before a time a jump plays in full, so that what it shows at
    that time is what playing from the start shows: the findings' window, two slow-facts reads
    (the sampler's cost per sample is measured between them) and a previous sample for rates."""
    return max(settings.thresholds.window_s, 2 * settings.facts_every * settings.interval) + 2 * settings.interval


class Player:
    """Plays a recording's events in order from the checkpoint it starts at; ``Player.at``
    stands at any time after skimming (reading, not parsing) up to ``lead`` seconds before it."""

    LOOKAHEAD = 10_000  # events looked at ahead for the next sample's time

    def __init__(
        self,
        recording: Recording,
        settings: Settings | None = None,
        diagnose: bool = True,
        checkpoint: int = 0,
        stride: float = 0.0,
    ) -> None:
        self.recording = recording
        # stride > 0: parse at most one sample per host per ``stride`` seconds (the first at or
        # after each multiple of it), so each one's rates are the mean over the stride; the
        # samples between are read, not parsed (a report of a long recording)
        self.stride = stride
        self._due: dict[str, float] = {}
        self._pending_facts: dict[str, dict] = {}
        self._facts_seen: dict[str, dict] = {}
        self.settings = settings or settings_from_json(recording.header.get("settings") or {})
        self.now = recording.checkpoints[checkpoint][0] if checkpoint else recording.start
        self._events = recording.numbered_events(checkpoint)
        self._ahead: deque[tuple[int, dict]] = deque()  # (line number, event) peeked, not played
        self._played = -1  # the line number of the last event played
        self._tests_scan = TestsAhead(recording, checkpoint)
        self.read_times: deque[float] = deque(maxlen=2)  # the last samples played
        self.tracks: dict[str, Track] = {}
        for h in recording.header.get("hosts") or []:
            if isinstance(h, dict) and isinstance(h.get("name"), str):
                self._track(h["name"], h.get("os"), h.get("os_detail"))
        self.own = OwnTraffic()
        self.diagnoser = (
            Diagnoser(self.settings, clock=lambda: self.now, own_traffic=self.own_traffic) if diagnose else None
        )
        self.tests: list[dict] = []  # the recorded "test" events so far
        self.findings_log: list[dict] = []  # the recorded "finding" events so far
        # the recorded subnet MTU probes so far, in order (the Diagnoser has learnt each), and
        # the last one of each subnet
        self.learnt: list[SubnetMtu] = []
        self.probed: dict[str, SubnetMtu] = {}
        self.flows: dict[str, dict] = {}  # each host's last recorded "flows" event so far
        self.on_flows: Callable[[dict], None] | None = None  # told of each one as it is played

    @classmethod
    def at(
        cls,
        recording: Recording,
        when: float,
        settings: Settings | None = None,
        lead: float | None = None,
        diagnose: bool = True,
    ) -> "Player":
        """A player at ``when`` that decompressed from the checkpoint before ``when - lead``,
        skimmed to there and played the rest: what it shows is what playing from the start
        shows, without parsing the hours before."""
        player = cls(recording, settings, diagnose)
        since = when - (default_lead(player.settings) if lead is None else lead)
        k = recording.checkpoint_before(since)
        if k:
            player = cls(recording, player.settings, diagnose, checkpoint=k)
        player.skim_to(since)
        player.advance_to(when)
        return player

    def _track(self, host: str, os_name: str | None = None, os_detail: str | None = None) -> Track:
        track = self.tracks.get(host)
        if track is None:
            track = self.tracks[host] = Track(
                HostUpdate(host=host, os=os_name, os_detail=os_detail, state=HostState.CONNECTING)
            )
        return track

    def _peek(self, i: int = 0) -> dict | None:
        while len(self._ahead) <= i:
            item = next(self._events, None)
            if item is None:
                return None
            self._ahead.append(item)
        return self._ahead[i][1]

    @property
    def done(self) -> bool:
        return self._peek() is None

    def own_traffic(self, host: str) -> float | None:
        """linkdeck's own traffic through ``host`` as live knew it at this moment (own.py)."""
        return self.own.at(host, self.now, self._tests_ahead())

    def _tests_ahead(self) -> list[dict]:
        """The "test" events among the next ones (at most LOOKAHEAD), up to the first one later
        than as long as a test can run. A scan of its own finds them without decoding or keeping
        the samples between (ten minutes of a 602-link node is 170 MB of them decoded)."""
        return self._tests_scan.after(self._played, self.now + OWN_AHEAD_S, self.LOOKAHEAD)

    def next_time(self) -> float | None:
        event = self._peek()
        return None if event is None else float(event["t"])

    def next_read_time(self) -> float | None:
        """When the next recorded sample comes (None: none within LOOKAHEAD events)."""
        for i in range(self.LOOKAHEAD):
            event = self._peek(i)
            if event is None:
                return None
            if event.get("ev") == "read":
                return float(event["t"])
        return None

    def _next(self) -> dict:
        self._peek()
        self._played, event = self._ahead.popleft()
        self.now = float(event["t"])
        return event

    def step(self) -> list[HostUpdate]:
        """Play the next event; the host updates it made."""
        event = self._next()
        if self.stride and not self._due_now(event):
            return []
        update = self._apply(event)
        if update is None:
            return []
        if self.diagnoser is not None:
            self.diagnoser.observe(update)
        return [update]

    def advance_to(self, when: float) -> list[HostUpdate]:
        out: list[HostUpdate] = []
        while (t := self.next_time()) is not None and t <= when:
            out += self.step()
        self.now = max(self.now, min(when, self.recording.end))
        return out

    def _due_now(self, event: dict) -> bool:
        """With a stride: whether this event is played (a sample not due is only noted, the
        last slow facts among those primed before the next one that is)."""
        kind, host = event.get("ev"), event.get("h")
        if not isinstance(host, str):
            return True
        if kind == "open":
            self._due.pop(host, None)
            self._pending_facts.pop(host, None)
            return True
        if kind not in ("read", "prime"):
            return True
        track = self._track(host)
        t = float(event["t"])
        if kind == "prime" or t < self._due.get(host, t):
            if kind == "prime" or (track.adapter is not None and track.adapter.carries_facts(event)):
                self._pending_facts[host] = event
            return False
        facts = self._pending_facts.pop(host, None)
        if facts is not None and not self._same_facts(host, facts):
            self._apply({**facts, "ev": "prime"})
        start = self.recording.start
        self._due[host] = start + (int((t - start) / self.stride) + 1) * self.stride
        return True

    def _same_facts(self, host: str, event: dict) -> bool:
        """Whether a slow-facts read says what the last one parsed said (a sampler's frames
        then differ only in their tick): parsing it again would change nothing."""
        frame = event.get("f")
        if not isinstance(frame, dict):
            return False
        slow = {k: v for k, v in frame.items() if k not in ("tick", "times")}
        same = self._facts_seen.get(host) == slow
        self._facts_seen[host] = slow
        return same

    def skim_to(self, when: float) -> None:  # noqa: C901, PLR0912 - one pass over the frames a jump skims
        """Read the events up to ``when`` without parsing the samples, keeping per host only
        what playing on needs (its connection, the connection's first sample, the last slow
        facts, the last two samples, its state), then parse those: the tracks stand as if every
        sample had been played."""
        kept: dict[str, dict[str, dict | None]] = {}
        adapters: dict[str, Adapter | None] = {}
        while (t := self.next_time()) is not None and t <= when:
            event = self._next()
            kind, host = event.get("ev"), event.get("h")
            self._log(event)
            if kind == "resume" and isinstance(event.get("tests"), list):
                self.tests = [e for e in event["tests"] if isinstance(e, dict)]
            if not isinstance(host, str):
                continue
            state = kept.setdefault(
                host, {"open": None, "first": None, "facts": None, "prev": None, "last": None, "state": None}
            )
            if kind == "resume":
                state.update({k: event.get(k) if isinstance(event.get(k), dict) else None for k in state})
                opened = state["open"] or {}
                adapters[host] = (
                    replay_adapter(opened.get("os"), opened.get("os_detail"), opened.get("via", "sh"), self.settings)
                    if opened
                    else None
                )
                continue
            if kind == "open":
                state.update(open=event, first=None, facts=None, prev=None, last=None)
                adapters[host] = replay_adapter(
                    event.get("os"), event.get("os_detail"), event.get("via", "sh"), self.settings
                )
            elif kind == "prime" or (
                kind == "read" and (a := adapters.get(host)) is not None and a.carries_facts(event)
            ):
                state["facts"] = event
            if kind == "read":
                state["first"] = state["first"] or event
                state["prev"], state["last"] = state["last"], event
            elif kind == "state":
                state["state"] = event
        for state in kept.values():
            if state["open"] is not None:
                self._apply(state["open"])
            # the connection's first sample, then its last two: the rates layer counts the
            # totals between them as it counted them sample by sample (a counter that wrapped
            # more than once in between is the difference), the last one's rates are its own,
            # and the findings' window holds it as it would
            first, facts, prev, last = state["first"], state["facts"], state["prev"], state["last"]
            if first is not None:
                self._apply(first)
            if facts is not None and all(facts is not e for e in (first, prev, last)):
                self._apply({**facts, "ev": "prime"})
            update = None
            for sample in (prev, last):
                if sample is not None and sample is not first:
                    update = self._apply(sample)
            if update is not None and self.diagnoser is not None:
                self.diagnoser.observe(update)
            if state["state"] is not None:
                self._apply(state["state"])
        self.now = max(self.now, when)

    def updates(self) -> list[HostUpdate]:
        return [t.last for t in self.tracks.values()]

    def _log(self, event: dict) -> None:
        """What every played or skimmed event tells besides a host's numbers: tests, findings,
        subnet MTU probes, linkdeck's own traffic."""
        self.own.play(event)
        kind = event.get("ev")
        if kind == "test":
            self.tests.append(event)
        elif kind == "finding":
            self.findings_log.append(event)
        elif kind == "flows":
            self._flows(event)
        elif kind == "subnet_mtu":
            self._learn(event)
        elif kind == "resume" and isinstance(event.get("flows"), dict):
            self._flows(event["flows"])
        elif kind == "resume" and isinstance(event.get("subnet_mtu"), list):
            for probe in event["subnet_mtu"]:
                if isinstance(probe, dict):
                    self._learn(probe)

    def _learn(self, event: dict) -> None:
        found = subnet_mtu_from_json(event)
        if found is None or self.probed.get(found.subnet) == found:
            return  # unreadable, or a checkpoint's repeat of the probe already played
        self.probed[found.subnet] = found
        self.learnt.append(found)
        if self.diagnoser is not None:
            self.diagnoser.learn(found)

    def _flows(self, event: dict) -> None:
        host = event.get("h")
        if (
            not isinstance(host, str)
            or not isinstance(event.get("lines"), list)
            or not isinstance(event.get("t"), (int, float))
        ):
            return
        if self.flows.get(host) is event or (self.flows.get(host) or {}).get("t") == event["t"]:
            return  # a checkpoint's repeat of the round already played
        self.flows[host] = event
        if self.on_flows is not None:
            self.on_flows(event)

    def _apply(self, event: dict) -> HostUpdate | None:
        kind, host = event.get("ev"), event.get("h")
        self._log(event)
        if not isinstance(host, str):
            return None
        track = self._track(host)
        if kind == "open":
            track.adapter = replay_adapter(
                event.get("os"), event.get("os_detail"), event.get("via", "sh"), self.settings
            )
            track.stream = Stream()
            reached = event.get("reached_at")
            changes: dict = {
                "os": event.get("os"), "os_detail": event.get("os_detail"), "error": None, "detail": NO_DETAIL,
                "reached_at": ip_text(reached) if isinstance(reached, str) else None,
            }  # fmt: skip
            if track.adapter is None:
                changes.update(
                    state=HostState.ERROR, error=f"recorded OS {event.get('os')!r}: this linkdeck has no parser for it"
                )
        elif kind in ("read", "prime"):
            if track.adapter is None:
                return None
            item = track.adapter.replayed(event, float(event["t"]))
            if kind == "prime":
                track.stream.restore(event.get("stream"))
                return None  # it only brings the parser and the cost up to where live was
            self.read_times.append(float(event["t"]))
            changes = sample_changes(item, track.stream, host, self.settings, float(event["t"]))
            track.samples += changes["state"] == HostState.LIVE
        elif kind == "state":
            try:
                state = HostState(event.get("state"))
            except ValueError:
                return None
            changes = {"state": state, "error": event.get("error"), "detail": HostDetail.from_json(event.get("detail"))}
        else:
            return None  # (a checkpoint's "resume" is for a player starting there: skim_to)
        track.last = replace(track.last, **changes)
        return track.last
