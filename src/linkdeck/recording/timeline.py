"""A whole recording played once and kept as what a report shows: every interface's rates
over time, its last facts, the findings with their spans, every test with its verdict."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.model import HostUpdate, Interface
from ..core.tcpstats import TcpRates, retrans_pct
from ..flows.round_report import recorded
from .fileformat import Recording
from .flows_seen import HostFlows
from .own import span
from .replay import Player, settings_from_json

MAX_POINTS = 600  # points per interface a report keeps and charts: a day at 1 Hz still draws in a moment


@dataclass
class Series:
    """One interface over the session: parallel lists, one entry per point. A point is the
    mean of the samples in ``step`` seconds (one sample when the recording is short), so an
    8-hour recording keeps at most MAX_POINTS per interface and its shape."""

    step: float = 0.0
    times: list[float] = field(default_factory=list)  # each point's first sample
    rx_bps: list[float | None] = field(default_factory=list)
    tx_bps: list[float | None] = field(default_factory=list)
    errors_ps: list[float] = field(default_factory=list)  # rx + tx, 0 where unknown
    drops_ps: list[float] = field(default_factory=list)
    iface: Interface | None = None  # the last facts seen
    _bucket: int = -1
    _counts: list[int] = field(default_factory=lambda: [0, 0, 0])  # samples in the point: rx, tx, all

    @property
    def trouble(self) -> list[tuple[float, float, float]]:
        """(time, errors/s, drops/s) of every point that counted errors or drops."""
        return [(t, e, d) for t, e, d in zip(self.times, self.errors_ps, self.drops_ps) if e or d]

    def add(self, origin: float, t: float, rx: float | None, tx: float | None, errors: float, drops: float) -> None:
        bucket = int((t - origin) // self.step) if self.step > 0 else len(self.times)
        if bucket != self._bucket or not self.times:
            self._bucket = bucket
            self.times.append(t)
            self.rx_bps.append(rx)
            self.tx_bps.append(tx)
            self.errors_ps.append(errors)
            self.drops_ps.append(drops)
            self._counts = [rx is not None, tx is not None, 1]
            return
        n = self._counts
        n[2] += 1
        self.errors_ps[-1] += (errors - self.errors_ps[-1]) / n[2]
        self.drops_ps[-1] += (drops - self.drops_ps[-1]) / n[2]
        for i, (values, value) in enumerate(((self.rx_bps, rx), (self.tx_bps, tx))):
            if value is not None:
                n[i] += 1
                values[-1] = value if n[i] == 1 else values[-1] + (value - values[-1]) / n[i]  # type: ignore[operator]


@dataclass
class TcpSummary:
    """One host's TCP health over the session: sums of its per-interval rates (each interval
    weighs the same, as the charts' points do) and its worst interval."""

    samples: int = 0  # intervals with segments sent and retransmits known
    out_segs_ps: float = 0.0  # summed over those intervals
    retrans_segs_ps: float = 0.0
    peak_pct: float | None = None
    peak_at: float | None = None
    pruned_ps: float = 0.0  # receive-buffer drops (pruned, receive queue, backlog), summed
    csum_errs_ps: float = 0.0
    told: set[str] = field(default_factory=set)  # which of those the host's OS reports

    def add(self, t: float, tcp: TcpRates) -> None:
        if tcp.out_segs_ps is not None and tcp.retrans_segs_ps is not None:
            self.samples += 1
            self.out_segs_ps += tcp.out_segs_ps
            self.retrans_segs_ps += tcp.retrans_segs_ps
        if tcp.retrans_pct is not None and (self.peak_pct is None or tcp.retrans_pct > self.peak_pct):
            self.peak_pct, self.peak_at = tcp.retrans_pct, t
        pruned = [v for v in (tcp.rcv_pruned_ps, tcp.rcvq_drops_ps, tcp.backlog_drops_ps) if v is not None]
        if pruned:
            self.told.add("pruned")
            self.pruned_ps += sum(pruned)
        if tcp.in_csum_errs_ps is not None:
            self.told.add("csum")
            self.csum_errs_ps += tcp.in_csum_errs_ps

    @property
    def retrans_pct(self) -> float | None:
        return retrans_pct(self.out_segs_ps, self.retrans_segs_ps)


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
    tcp: dict[str, TcpSummary] = field(default_factory=dict)  # hosts whose TCP counters were read
    flows: dict[str, HostFlows] = field(default_factory=dict)  # hosts whose flows were recorded

    @property
    def start(self) -> float:
        return self.recording.start

    @property
    def end(self) -> float:
        return self.recording.end

    def test_windows(self, host: str) -> list[tuple[float, float]]:
        """When each recorded test through ``host`` had its traffic running (start, end)."""
        out = []
        for event in self.tests:
            got = span(event)
            if got is not None and host in got[0]:
                out.append((got[1], got[2]))
        return out


def _sum(a: float | None, b: float | None) -> float:
    return (a or 0.0) + (b or 0.0)


def build(recording: Recording) -> Timeline:
    """Play the whole recording once, as a stream (no findings pass: the report shows the
    findings as they were raised live, recorded in the file)."""
    settings = settings_from_json(recording.header.get("settings") or {})
    step = max(settings.interval, (recording.end - recording.start) / MAX_POINTS)
    # A long recording: one sample parsed per host per step, whose rates are the step's mean
    # (what averaging every sample gives, bar gaps) and belong where the step began.
    stride = step if step >= 2 * settings.interval else 0.0
    player = Player(recording, settings, diagnose=False, stride=stride)
    series: dict[tuple[str, str], Series] = {}
    tcp: dict[str, TcpSummary] = {}
    last_time: dict[str, float] = {}
    flows: dict[str, HostFlows] = {}

    def seen(event: dict) -> None:  # judged with the hosts as the replay has them then
        got = recorded(event, {h: t.last for h, t in player.tracks.items()})
        if got is not None:
            flows.setdefault(got.host, HostFlows()).add(got)

    player.on_flows = seen
    while not player.done:
        for update in player.step():
            if update.time is None or update.state.value != "live" or last_time.get(update.host) == player.now:
                continue
            when = last_time.get(update.host, player.now) if stride else player.now
            last_time[update.host] = player.now
            if update.tcp is not None:
                tcp.setdefault(update.host, TcpSummary()).add(when, update.tcp)
            for view in update.interfaces:
                s = series.get((update.host, view.iface.name))
                if s is None:
                    s = series[(update.host, view.iface.name)] = Series(step)
                s.iface = view.iface
                r = view.rates
                s.add(
                    recording.start,
                    when,
                    r.rx_bps,
                    r.tx_bps,
                    _sum(r.rx_errors_ps, r.tx_errors_ps),
                    _sum(r.rx_drops_ps, r.tx_drops_ps),
                )
    return Timeline(
        recording,
        {h: t.last for h, t in player.tracks.items()},
        series,
        _spans(player.findings_log),
        player.tests,
        tcp,
        flows,
    )


def _spans(log: list[dict]) -> list[FindingSpan]:
    """One span per stretch a finding was raised. Raised again while raised (its severity or
    hint changed) keeps the span and its start, and takes the new words."""
    open_: dict[tuple, FindingSpan] = {}
    done: list[FindingSpan] = []
    for event in log:
        key = (event.get("code"), event.get("host"), event.get("interface"))
        if event.get("on"):
            span = open_.get(key)
            if span is None:
                open_[key] = FindingSpan(
                    str(event.get("code")), str(event.get("severity")), str(event.get("host")), event.get("interface"),
                    str(event.get("message", "")), str(event.get("evidence", "")), str(event.get("hint", "")),
                    float(event["t"]), None,
                )  # fmt: skip
            else:
                span.severity, span.message = str(event.get("severity")), str(event.get("message", ""))
                span.evidence, span.hint = str(event.get("evidence", "")), str(event.get("hint", ""))
        elif key in open_:
            span = open_.pop(key)
            span.until = float(event["t"])
            done.append(span)
    return sorted(done + list(open_.values()), key=lambda s: (s.since, s.code))
