"""Builders of model objects for tests: an interface, its view with rates, a host's update,
settings with thresholds, a clock a test moves, ``codes`` to compare findings; a test's result
and its ends for the verdict; a recording file from constructed events. Real command outputs
are read with ``tests.corpus.fixture``; the namespace lab is ``tests.lab``; the command line
is ``tests.cli``."""

from __future__ import annotations

import json
from pathlib import Path

import zstandard

from linkdeck.core import model
from linkdeck.core.model import Counters, EndState, Finding, HostState, HostUpdate, Interface, InterfaceView, Rates
from linkdeck.findings.engine import Diagnoser
from linkdeck.parsers.iperf3 import parse_json
from linkdeck.recording import fileformat
from linkdeck.settings.config import Settings, Thresholds
from tests.corpus import fixture


def iface(name: str = "eth0", **kw) -> Interface:
    base = dict(kind="physical", oper="up", mtu=1500, speed_mbps=1000, duplex="full")
    base.update(kw)
    return Interface(name=name, **base)


def view(i: Interface, **rates) -> InterfaceView:
    return InterfaceView(iface=i, rates=Rates(**rates), totals=Counters())


def update(
    host: str, t: float, *views: InterfaceView, os: str = "linux", state: HostState = HostState.LIVE
) -> HostUpdate:
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
        d.observe(
            update(
                host,
                start + k,
                *(view(i, rx_errors_ps=0.0, tx_errors_ps=0.0, rx_drops_ps=0.0, tx_drops_ps=0.0) for i in ifaces),
            )
        )


def codes(findings: list[Finding]) -> list[tuple[str, str, str | None]]:
    return [(f.code, f.host, f.interface) for f in findings]


# -- a test's result and its ends (verdict.judge's input) ----------------------------------


def from_iperf3(rel: str, src: str = "a", dst: str = "b", address: str = "127.0.0.1") -> model.TestResult:
    """What probe.py will hand over: an Iperf3Result as a TestResult (iperf3 < 3.16 is
    single-threaded)."""
    r = parse_json(fixture(rel))
    version = tuple(int(p) for p in r.version.split(".")[:2]) if r.version else None
    return model.TestResult(
        src=src,
        dst=dst,
        address=address,
        duration_s=r.duration_s or 0.0,
        forward_bps=r.forward_received_bps,
        reverse_bps=r.reverse_received_bps,
        forward_retransmits=r.forward_retransmits,
        reverse_retransmits=r.reverse_retransmits,
        rtt_ms=r.rtt_ms,
        cpu_src_pct=r.cpu_local_pct,
        cpu_dst_pct=r.cpu_remote_pct,
        iperf3_version=r.version,
        single_threaded=None if version is None else version < (3, 16),
        error=r.error,
        raw_end=r.end,
    )


def end(host: str, **kw) -> EndState:
    return EndState(host=host, iface=iface("eth0", **kw))


def cause_codes(v) -> list[str]:
    return [c.code for c in v.causes]


def clean_gigabit(**kw) -> model.TestResult:
    base = dict(
        src="a",
        dst="b",
        address="10.0.0.2",
        duration_s=5.0,
        forward_bps=941e6,
        reverse_bps=938e6,
        forward_retransmits=0,
        reverse_retransmits=2,
        cpu_src_pct=12.0,
        cpu_dst_pct=15.0,
        iperf3_version="3.12",
        single_threaded=True,
    )
    base.update(kw)
    return model.TestResult(**base)


# -- a recording --------------------------------------------------------------------------------


def recording_file(tmp_path: Path, events: list[dict], version: int = fileformat.FORMAT_VERSION) -> Path:
    path = tmp_path / "made.ldrec"
    header = {fileformat.MAGIC: version, "linkdeck": "9.9.9", "started": 100.0, "hosts": []}
    text = "".join(json.dumps(e) + "\n" for e in [header, *events]).encode()
    path.write_bytes(zstandard.ZstdCompressor().compress(text))
    return path


def with_twin(
    recording: fileformat.Recording, path: Path, shift: float = 0.0, events: list[dict] | None = None
) -> Path:
    """``recording`` (a real one of one host) written to ``path`` with a second host made from
    it (constructed): the same events under the name "twin", ``shift`` seconds later; ``events``
    in place of the recording's own when given (changed, or with some added); one "end" after
    them all."""
    (first, *_), header = recording.header["hosts"], dict(recording.header)
    header["hosts"] = [*header["hosts"], dict(first, name="twin")]
    events = [e for e in (recording.events() if events is None else events) if e["ev"] != "end"]
    twin = [dict(e, h="twin", t=float(e["t"]) + shift) for e in events if e.get("h") == first["name"]]
    merged = sorted(events + twin, key=lambda e: float(e["t"]))
    merged.append({"t": float(merged[-1]["t"]) + 0.01, "ev": "end"})
    path.write_bytes(
        zstandard.ZstdCompressor().compress("".join(json.dumps(e) + "\n" for e in [header, *merged]).encode())
    )
    return path
