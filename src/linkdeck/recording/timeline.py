"""A whole recording played once and kept as what a report shows: every interface's rates
over time, its last facts, the findings with their spans, every test with its verdict."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model import HostUpdate, Interface
from .fileformat import Recording
from .replay import Player


@dataclass
class Series:
    """One interface over the session: parallel lists, one entry per sample with rates."""

    times: list[float] = field(default_factory=list)
    rx_bps: list[float | None] = field(default_factory=list)
    tx_bps: list[float | None] = field(default_factory=list)
    errors_ps: list[float] = field(default_factory=list)  # rx + tx, 0 where unknown
    drops_ps: list[float] = field(default_factory=list)
    iface: Interface | None = None  # the last facts seen

    @property
    def trouble(self) -> list[tuple[float, float, float]]:
        """(time, errors/s, drops/s) of every sample that counted errors or drops."""
        return [(t, e, d) for t, e, d in zip(self.times, self.errors_ps, self.drops_ps) if e or d]


@dataclass
class FindingSpan:
    code: str
    severity: str
    host: str
    interface: str | None
    message: str
    evidence: str
    hint: str
    since: float
    until: float | None  # None: still raised when the recording ended


@dataclass
class Timeline:
    recording: Recording
    hosts: dict[str, HostUpdate]  # the last update of each host
    series: dict[tuple[str, str], Series]
    findings: list[FindingSpan]
    tests: list[dict]  # the recorded "test" events, in order

    @property
    def start(self) -> float:
        return self.recording.start

    @property
    def end(self) -> float:
        return self.recording.end


def _sum(a: float | None, b: float | None) -> float:
    return (a or 0.0) + (b or 0.0)


def build(recording: Recording) -> Timeline:
    player = Player(recording)
    series: dict[tuple[str, str], Series] = {}
    while not player.done:
        for update in player.step():
            if update.time is None or update.state.value != "live":
                continue
            for view in update.interfaces:
                s = series.setdefault((update.host, view.iface.name), Series())
                s.iface = view.iface
                r = view.rates
                if s.times and s.times[-1] == player.now:
                    continue
                s.times.append(player.now)
                s.rx_bps.append(r.rx_bps)
                s.tx_bps.append(r.tx_bps)
                s.errors_ps.append(_sum(r.rx_errors_ps, r.tx_errors_ps))
                s.drops_ps.append(_sum(r.rx_drops_ps, r.tx_drops_ps))
    return Timeline(recording, {h: t.last for h, t in player.tracks.items()}, series, _spans(player.findings_log), player.tests)


def _spans(log: list[dict]) -> list[FindingSpan]:
    open_: dict[tuple, FindingSpan] = {}
    done: list[FindingSpan] = []
    for event in log:
        key = (event.get("code"), event.get("host"), event.get("interface"))
        if event.get("on"):
            if key not in open_:
                open_[key] = FindingSpan(
                    str(event.get("code")), str(event.get("severity")), str(event.get("host")), event.get("interface"),
                    str(event.get("message", "")), str(event.get("evidence", "")), str(event.get("hint", "")),
                    float(event["t"]), None,
                )  # fmt: skip
        elif key in open_:
            span = open_.pop(key)
            span.until = float(event["t"])
            done.append(span)
    return sorted(done + list(open_.values()), key=lambda s: (s.since, s.code))
