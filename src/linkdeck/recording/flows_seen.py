"""The TCP flows a recording saw, per host: each flow over the rounds the flows screen
recorded, judged as the replay judges them (``flows.report.recorded``) and kept as what a
report lists: when it was seen, its peak rates, and how often each limiter was named, with
the last round that named it (its verdict and evidence are that round's)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..flows.judge import Flow, Limiter, Why
from ..flows.round_report import FlowReport

MAX_FLOWS = 200  # per host; flows first seen beyond these are counted, not kept


@dataclass
class FlowSeen:
    local: str
    remote: str
    remote_host: str | None
    first: float
    last: float
    rounds: int = 0
    peak_tx_bps: float | None = None
    peak_rx_bps: float | None = None
    named: dict[Limiter, int] = field(default_factory=dict)  # rounds that named each limiter
    latest: dict[Limiter, Flow] = field(default_factory=dict)  # the last round that named it

    def add(self, when: float, flow: Flow) -> None:
        self.last, self.rounds = when, self.rounds + 1
        self.remote_host = flow.remote_host or self.remote_host
        if flow.tx_bps is not None:
            self.peak_tx_bps = max(self.peak_tx_bps or 0.0, flow.tx_bps)
        if flow.rx_bps is not None:
            self.peak_rx_bps = max(self.peak_rx_bps or 0.0, flow.rx_bps)
        if flow.why is Why.NEW and self.named:
            return  # a first read says nothing the later ones do not
        self.named[flow.limiter] = self.named.get(flow.limiter, 0) + (flow.why is not Why.NEW)
        self.latest.pop(flow.limiter, None)  # the last one in the dict is the latest named
        self.latest[flow.limiter] = flow

    @property
    def limiter(self) -> Limiter:
        """The limiter named most often (the latest of those tied)."""
        order = list(self.latest)
        return max(self.named, key=lambda k: (self.named[k], order.index(k)))

    @property
    def flow(self) -> Flow:
        """The last round that named ``limiter``: its verdict and evidence stand for the flow."""
        return self.latest[self.limiter]

    @property
    def moved(self) -> float:
        return (self.peak_tx_bps or 0.0) + (self.peak_rx_bps or 0.0)


@dataclass
class HostFlows:
    rounds: int = 0
    first: float | None = None
    last: float | None = None
    interfaces: set[str | None] = field(default_factory=set)  # None: the whole host
    flows: dict[tuple[str, str], FlowSeen] = field(default_factory=dict)
    not_kept: int = 0

    def add(self, got: FlowReport) -> None:
        when = got.received if got.received is not None else got.time or 0.0
        self.rounds += 1
        self.first = when if self.first is None else self.first
        self.last = when
        self.interfaces.add(got.interface)
        for flow in got.flows:
            key = (flow.local, flow.remote)
            seen = self.flows.get(key)
            if seen is None:
                if len(self.flows) >= MAX_FLOWS:
                    self.not_kept += 1
                    continue
                seen = self.flows[key] = FlowSeen(flow.local, flow.remote, flow.remote_host, when, when)
            seen.add(when, flow)

    def busiest(self, n: int) -> list[FlowSeen]:
        return sorted(self.flows.values(), key=lambda s: -s.moved)[:n]
