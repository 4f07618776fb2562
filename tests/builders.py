"""Builders of model objects for tests: an interface, its view with rates, a host's update,
settings with thresholds, a clock a test moves, and ``codes`` to compare findings. Real command
outputs are read with ``tests.corpus.fixture``; the namespace lab is ``tests.lab``."""

from __future__ import annotations

from linkdeck.config import Settings, Thresholds
from linkdeck.diagnose import Diagnoser
from linkdeck.model import Counters, Finding, HostState, HostUpdate, Interface, InterfaceView, Rates


def iface(name: str = "eth0", **kw) -> Interface:
    base = dict(kind="physical", oper="up", mtu=1500, speed_mbps=1000, duplex="full")
    base.update(kw)
    return Interface(name=name, **base)


def view(i: Interface, **rates) -> InterfaceView:
    return InterfaceView(iface=i, rates=Rates(**rates), totals=Counters())


def update(host: str, t: float, *views: InterfaceView, os: str = "linux", state: HostState = HostState.LIVE) -> HostUpdate:
    return HostUpdate(host=host, os=os, state=state, time=t, interfaces=tuple(views))


def settings(window_s: float = 30.0, **kw) -> Settings:
    return Settings(thresholds=Thresholds(window_s=window_s, **kw))


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def quiet_window(d: Diagnoser, host: str, until: float, *ifaces: Interface) -> None:
    """A window's worth of quiet ticks (1 s apart) before ``until``: a rule stated over
    window_s judges a full window only."""
    start = until - d.settings.thresholds.window_s - 1
    for k in range(int(d.settings.thresholds.window_s) + 1):
        d.observe(update(host, start + k, *(view(i, rx_errors_ps=0.0, tx_errors_ps=0.0, rx_drops_ps=0.0, tx_drops_ps=0.0) for i in ifaces)))


def codes(findings: list[Finding]) -> list[tuple[str, str, str | None]]:
    return [(f.code, f.host, f.interface) for f in findings]
