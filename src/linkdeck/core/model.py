"""The data every layer passes around: frozen dataclasses, no behaviour beyond small derivations.

Unknown values are ``None`` everywhere, never 0 or a platform sentinel: the parsers and the
speed normaliser in ``units`` turn sentinels into ``None`` before anything is built here.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, fields, replace
from operator import attrgetter
from typing import Any, Callable, Mapping, Protocol, TypeVar, cast

from .codes import Code
from .fleetstate import keep_as_values
from .jsonfields import Field, write
from .kinds import Kind, speed_is_real
from .levels import Severity, Status  # a finding's and a verdict's words
from .tcpstats import TcpCounters, TcpRates

COUNTER_FIELDS = ("rx_bytes", "tx_bytes", "rx_packets", "tx_packets", "rx_errors", "tx_errors", "rx_drops", "tx_drops")

# The kinds a parser may give an interface (kinds.Kind but the host totals row's).
KINDS = tuple(k for k in Kind if k is not Kind.HOST)


@dataclass(frozen=True, slots=True)
class Counters:
    """Cumulative counters as the OS reports them (unsigned, may wrap at 32 or 64 bits)."""

    rx_bytes: int | None = None
    tx_bytes: int | None = None
    rx_packets: int | None = None
    tx_packets: int | None = None
    rx_errors: int | None = None
    tx_errors: int | None = None
    rx_drops: int | None = None
    tx_drops: int | None = None
    # Width of the counters when the source knows it (32 on old BSD netstat, kstat non-64
    # names); None means "try 32 then 64" in the rates layer.
    bits: int | None = None

    def as_dict(self) -> dict[str, int | None]:
        return {name: getattr(self, name) for name in COUNTER_FIELDS}


@dataclass(frozen=True, slots=True)
class InterfaceFacts:
    """The facts about one interface that a command may say, each declared once, at its
    "unsaid" default (None, or empty where it holds several values).

    :class:`IfaceRecord` (one command's partial view) and :class:`Interface` (the whole
    interface's) are built on it and add only what is theirs, so a fact added here is carried
    by every parser's record, their merge, the interface made from it and its JSON form.
    """

    name: str
    kind: Kind | None = None
    oper: str | None = None  # up / down / unknown / dormant / lowerlayerdown …
    mtu: int | None = None
    speed_mbps: int | None = None
    duplex: str | None = None  # "full" / "half" / None
    addresses: tuple[str, ...] = ()  # "192.0.2.1/24", "fe80::1/64"
    mac: str | None = None
    over: str | None = None  # what it sits on: vlan parent, vnic over aggr
    members: tuple[str, ...] = ()  # bond/lagg/aggr ports, bridge members
    supported_speeds_mbps: tuple[int, ...] = ()
    carrier_changes: int | None = None
    driver: str | None = None
    driver_version: str | None = None  # ethtool -i's version, where the host says
    firmware_version: str | None = None
    # segmentation/receive offloads switched on, by ethtool -k's names; None: not read
    offload: tuple[str, ...] | None = None
    ring_rx: int | None = None
    ring_rx_max: int | None = None
    ring_tx: int | None = None
    ring_tx_max: int | None = None
    # Driver-level counters (ethtool -S, kstat extras) by their own names.
    nic_counters: Mapping[str, int] = field(default_factory=dict)
    # Anything else worth showing on the detail screen, as (label, value) pairs.
    extra: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class IfaceRecord(InterfaceFacts):
    """What one command said about one interface: a partial view, merged by name.

    Every parser returns ``list[IfaceRecord]`` (plus command-specific extras where needed), so
    an adapter can run several commands and merge what each knows with :func:`merge_records`.
    """

    # The counters it read, which go to the sample beside the interface, not into it.
    counters: Counters | None = None


@dataclass(frozen=True, slots=True)
class Interface(InterfaceFacts):
    """Slow-changing facts about one interface: every fact known, and what only the whole
    interface knows (its route, the config's speed over the host's)."""

    # A fact no command gave is unknown here, not unsaid (record_to_interface fills it in).
    kind: Kind = Kind.UNKNOWN
    oper: str = "unknown"
    default_route: bool = False
    # the speed came from the config's [speed], not the host; what the host said is kept
    speed_configured: bool = False
    reported_speed_mbps: int | None = None


_FACTS = fields(InterfaceFacts)
_FACT_NAMES = tuple(f.name for f in _FACTS)
_facts_of = attrgetter(*_FACT_NAMES)
# A record's fields that hold several values (empty by default) merge as unions.
_MERGE_TUPLES = frozenset(f.name for f in _FACTS if f.default == ())
_RECORD_FIELDS = tuple(f.name for f in fields(IfaceRecord))


def merge_records(records: list[IfaceRecord]) -> dict[str, IfaceRecord]:
    """Merge partial records by interface name; a later non-empty value wins, tuples union."""
    merged: dict[str, IfaceRecord] = {}
    for rec in records:
        old = merged.get(rec.name)
        if old is None:
            merged[rec.name] = rec
            continue
        changes: dict[str, Any] = {}
        for name in _RECORD_FIELDS:
            new_val = getattr(rec, name)
            old_val = getattr(old, name)
            if name in _MERGE_TUPLES:
                if new_val:
                    changes[name] = tuple(dict.fromkeys((*old_val, *new_val)))
            elif name == "nic_counters":
                if new_val:
                    changes[name] = {**old_val, **new_val}
            elif new_val is not None:
                changes[name] = new_val
        merged[rec.name] = replace(old, **changes)
    return merged


# A fact no command gave (or gave empty) takes the interface's own default where it declares
# one of its own ("unknown"): the facts Interface narrows.
_UNSAID = {f.name: f.default for f in _FACTS}
_INTERFACE_DEFAULTS = {
    f.name: f.default for f in fields(Interface) if f.name in _UNSAID and f.default != _UNSAID[f.name]
}


def with_real_speed(rec: IfaceRecord) -> IfaceRecord:
    """``rec`` without a speed or duplex where :func:`kinds.speed_is_real` says they are made up."""
    if rec.speed_mbps is None and rec.duplex is None or speed_is_real(rec.kind, rec.oper):
        return rec
    return replace(rec, speed_mbps=None, duplex=None)


def record_to_interface(rec: IfaceRecord, default_route: bool = False) -> Interface:
    rec = with_real_speed(rec)
    values = dict(zip(_FACT_NAMES, _facts_of(rec)))
    for name, default in _INTERFACE_DEFAULTS.items():
        values[name] = values[name] or default
    values["nic_counters"] = dict(rec.nic_counters)
    return Interface(**values, default_route=default_route)


@dataclass(frozen=True, slots=True)
class HostSample:
    """One tick from one host: facts and counters for every interface, and when."""

    time: float  # seconds on a clock that only the same host's samples are compared against
    interfaces: Mapping[str, Interface]
    counters: Mapping[str, Counters]
    # What the sample cost: its text's size as the sampler printed it, and the sampler's own
    # CPU seconds so far on the host (user + system, itself and its commands) when it says.
    wire_bytes: int | None = None
    sampler_cpu_s: float | None = None
    tcp: TcpCounters | None = None  # the host's TCP counters, where its sampler reads them
    # Facts this sample lacks and why, one line each ("addresses unavailable: `ip -j addr`
    # printed output linkdeck could not read"): said on the host, never silently empty.
    missing: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Rates:
    """Per-second rates over one tick; None when unknown (first tick, reset, clock stall)."""

    rx_bps: float | None = None
    tx_bps: float | None = None
    rx_pps: float | None = None
    tx_pps: float | None = None
    rx_errors_ps: float | None = None
    tx_errors_ps: float | None = None
    rx_drops_ps: float | None = None
    tx_drops_ps: float | None = None


class HostState(str, enum.Enum):
    CONNECTING = "connecting"
    LIVE = "live"
    RECONNECTING = "reconnecting"
    AUTH_FAILED = "auth failed"
    HOST_KEY_UNKNOWN = "host key unknown"
    HOST_KEY_CHANGED = "host key changed"
    UNREACHABLE = "unreachable"
    ERROR = "error"  # connected, but the host's output could not be read

    @property
    def retryable(self) -> bool:
        return self not in (HostState.AUTH_FAILED, HostState.HOST_KEY_UNKNOWN, HostState.HOST_KEY_CHANGED)


@dataclass(frozen=True, slots=True)
class InterfaceView:
    """What a dashboard row shows for one interface at one tick."""

    iface: Interface
    rates: Rates
    totals: Counters  # cumulative since linkdeck started watching (deltas summed)
    util_pct: float | None = None

    @classmethod
    def of(cls, iface: Interface, rates: RateValues, totals: CounterValues, util_pct: float | None) -> InterfaceView:
        """A view from the values of its rates and totals, in COUNTER_FIELDS order (the rate
        step's way: it keeps them as they are, and shares the ones every idle interface has)."""
        return _view_of_values(iface, rates, totals, util_pct)


# A view's rates and totals as it keeps them: their values in their fields' order (Rates' is
# COUNTER_FIELDS', a Counters' ends with its bits), plain tuples the cyclic collector skips.
RateValues = tuple[float | None, ...]
CounterValues = tuple[int | None, ...]
_RATE_VALUES = keep_as_values(InterfaceView, "rates", Rates, tuple(f.name for f in fields(Rates)))
keep_as_values(InterfaceView, "totals", Counters, (*COUNTER_FIELDS, "bits"))
# The view's own __init__ as the kept fields take them too: as their values.
_view_of_values = cast(Callable[[Interface, RateValues, CounterValues, float | None], InterfaceView], InterfaceView)


def rate_values(view: InterfaceView) -> RateValues:
    """A view's rates as the plain tuple it keeps, in Rates' field order, with no Rates built:
    for the passes over every interface of the fleet (the findings' windows, 80,000 a refresh
    at 10,000 hosts), where building one per read is a cost the numbers alone do not need."""
    return _RATE_VALUES(view)


@dataclass(frozen=True, slots=True)
class HostDetail:
    """What a host's state says beyond its word and its error; None: not said.

    Its JSON form (:meth:`as_json`, in ``snapshot --json`` and in recordings) is an object of
    strings, one key per field said, in field order; :meth:`from_json` reads it back.
    """

    # A host waiting to try again: the wait, and when (this machine's epoch), in whole seconds
    # as the JSON form keeps them, so a replay shows what live showed.
    retry_in_s: float | None = None
    retry_at: float | None = None
    # The bytes of a request that got no answer on a connection that had logged in (a path MTU
    # black hole, likely); kept while the host reconnects.
    blackhole_request_bytes: int | None = None
    # What a live host's samples lack and why (an unreadable facts command), one item each.
    missing: tuple[str, ...] | None = None
    # An unknown or changed host key: its SHA256 fingerprint; for an unknown one also its type,
    # its base64 and the known_hosts name of the host that offered it (a jump host or the
    # target), "" where the transport did not tell.
    fingerprint: str | None = None
    key_type: str | None = None
    key_b64: str | None = None
    hop: str | None = None
    # A host read from Prometheus: "prometheus", its instance, the age of its sample (seconds).
    source: str | None = None
    instance: str | None = None
    sample_age_s: float | None = None
    # How an SSH host is reached (openssh or paramiko) and why that one.
    transport: str | None = None
    transport_why: str | None = None

    def as_json(self) -> dict[str, str]:
        """The fields said, as the strings ``snapshot --json`` and recordings have always held."""
        out: dict[str, str] = {}
        for name in _DETAIL_FIELDS:
            value = getattr(self, name)
            if value is not None:
                out[name] = _DETAIL_CODECS[name][0](value) if name in _DETAIL_CODECS else value
        return out

    @classmethod
    def from_json(cls, raw: object) -> HostDetail:
        """The detail a JSON form says (a recording's, of any linkdeck version): keys this
        version does not know, values not strings and strings that do not parse are skipped."""
        if not isinstance(raw, Mapping) or not raw:
            return NO_DETAIL
        said: dict[str, Any] = {}
        for name in _DETAIL_FIELDS:
            value = raw.get(name)
            if not isinstance(value, str):
                continue
            if name not in _DETAIL_CODECS:
                said[name] = value
                continue
            try:
                said[name] = _DETAIL_CODECS[name][1](value)
            except ValueError:
                continue
        return cls(**said) if said else NO_DETAIL


NO_DETAIL = HostDetail()
_DETAIL_FIELDS = tuple(f.name for f in fields(HostDetail))
# How the fields that are not plain strings are written to their JSON strings and read back.
_WHOLE: tuple[Callable[[Any], str], Callable[[str], Any]] = ("{:.0f}".format, float)
_DETAIL_CODECS: dict[str, tuple[Callable[[Any], str], Callable[[str], Any]]] = {
    "retry_in_s": _WHOLE,
    "retry_at": _WHOLE,
    "blackhole_request_bytes": (str, int),
    "missing": ("; ".join, lambda text: tuple(text.split("; "))),
    "sample_age_s": ("{:.1f}".format, float),
}


@dataclass(frozen=True, slots=True)
class HostUpdate:
    """Everything the UI or the headless commands learn about one host at one moment."""

    host: str  # the name the user knows it by
    os: str | None
    state: HostState
    error: str | None = None
    time: float | None = None
    interfaces: tuple[InterfaceView, ...] = ()
    os_detail: str | None = None  # "OPNsense 24.7", "SmartOS joyent_20240101" …
    # Extra context for a state: the SHA256 fingerprint of an unknown host key, the
    # seconds until the next reconnect …
    detail: HostDetail = NO_DETAIL
    # When the interfaces' numbers were measured, on this machine's wall clock, and until when
    # they count as live if nothing newer comes (freshness.py decides; the UI and snapshot ask).
    received: float | None = None
    fresh_until: float | None = None
    stale: bool = False  # set on the copy freshness.as_seen hands out: rates blanked, facts kept
    # What watching the host costs: bytes per sample on the wire, the sampler's CPU per sample
    # on the host (None where unknown: not reported, or not yet twice).
    wire_bytes: int | None = None
    remote_cpu_ms: float | None = None
    # The host's own address that linkdeck's SSH session arrived at (the host's $SSH_CONNECTION;
    # for this machine, the session linkdeck runs in): advice never removes what carries it.
    reached_at: str | None = None
    tcp: TcpRates | None = None  # the host's TCP health over the last interval; None: not read


D = TypeVar("D")
_PLAIN_FIELDS: dict[type, tuple[tuple[str, ...], frozenset[str]] | None] = {}


def replaced(obj: D, changes: Mapping[str, Any]) -> D:
    """``dataclasses.replace(obj, **changes)``, without its checks of every field each call:
    the collector replaces a host's update and sample every tick. A class whose fields are all
    plain (init, positional) is built from its fields' values in one pass; any other, or a
    change naming no field, goes through replace itself (which says what is wrong)."""
    cls = type(obj)
    if cls not in _PLAIN_FIELDS:
        every = fields(cast(Any, cls))
        plain = all(f.init and not f.kw_only for f in every)
        _PLAIN_FIELDS[cls] = (tuple(f.name for f in every), frozenset(f.name for f in every)) if plain else None
    known = _PLAIN_FIELDS[cls]
    if known is None or not changes.keys() <= known[1]:
        return cast(D, replace(cast(Any, obj), **changes))
    return cls(*[changes[name] if name in changes else getattr(obj, name) for name in known[0]])


@dataclass(frozen=True, slots=True)
class Finding:
    code: Code
    severity: Severity
    host: str
    interface: str | None
    message: str
    evidence: str
    hint: str

    def as_dict(self) -> dict[str, str | None]:
        return write(self, FINDING_JSON)


# A finding's object: snapshot --json's findings, an end's in diagnose --json, a recording's events.
FINDING_JSON: tuple[Field[Finding], ...] = (
    Field("code", ("string",), "what was found: a code of docs/FINDINGS.md's table", lambda f: f.code),
    Field("severity", ("string",), "info, warning or error", lambda f: f.severity.value),
    Field("host", ("string",), "the host it is on", lambda f: f.host),
    Field("interface", ("string", "null"), "the interface it is on; null: the whole host", lambda f: f.interface),
    Field("message", ("string",), "what it means, in one sentence", lambda f: f.message),
    Field("evidence", ("string",), "the figures it rests on", lambda f: f.evidence),
    Field("hint", ("string",), "what to do about it", lambda f: f.hint),
)


@dataclass(frozen=True, slots=True)
class TestResult:
    """What one bidirectional test measured (probe.py fills it, verdict.py judges it)."""

    src: str  # host names as the user knows them; src is the iperf3 client
    dst: str
    address: str  # the dst address the client connected to
    duration_s: float
    forward_bps: float | None = None  # src → dst goodput, receiver side
    reverse_bps: float | None = None  # dst → src goodput, receiver side
    forward_retransmits: int | None = None
    reverse_retransmits: int | None = None
    rtt_ms: float | None = None  # mean of the sender streams' mean RTT
    cpu_src_pct: float | None = None  # iperf3's host_total on each end
    cpu_dst_pct: float | None = None
    iperf3_version: str | None = None  # both ends' ("3.12", or "3.12 / 3.21" when they differ)
    single_threaded: bool | None = None  # iperf3 < 3.16 runs every stream on one core
    src_iperf3: str | None = None  # each end's iperf3 version, "3.21"
    dst_iperf3: str | None = None
    streams: int = 1  # iperf3 -P: parallel streams each way
    # each second of a --json-stream run (probe/iperf.py interval_of); () before iperf3 3.17
    intervals: tuple[Mapping[str, float | int | None], ...] = ()
    # each direction alone after a --bidir run fell short (probe/alone.py): forward_bps, reverse_bps, duration_s
    alone: Mapping[str, float | None] | None = None
    error: str | None = None
    raw_end: Mapping[str, object] = field(default_factory=dict)
    # The interface counters' view of the transfer, bit/s averaged over the test:
    # keys src_tx, src_rx, dst_tx, dst_rx.
    counters_bps: Mapping[str, float | None] = field(default_factory=dict)
    # Seconds between the two counter reads: longer than the test by the session's start and
    # end, over which other traffic on the path was counted too
    counters_window_s: float | None = None
    path_mtu: "PathMtu | None" = None  # probed before iperf3 started; None: not tried


@dataclass(frozen=True, slots=True)
class PathMtu:
    """The largest IP packet (bytes) each end's ping got through with don't-fragment, each
    way; None for a direction not probed, ``note`` then says why. ``forward_mtu`` and
    ``reverse_mtu`` are the sending interfaces' MTUs the search went up to."""

    forward: int | None = None
    reverse: int | None = None
    forward_mtu: int | None = None
    reverse_mtu: int | None = None
    note: str | None = None
    seconds: float = 0.0


# A path MTU's object (`path_mtu` of test --json and mtu --json); None (not probed) is both null.
PATH_MTU_JSON: tuple[Field[PathMtu | None], ...] = (
    Field(
        "forward",
        ("integer", "null"),
        "largest IP packet through SRC → DST, bytes; null when not probed",
        lambda p: p.forward if p else None,
    ),
    Field(
        "reverse",
        ("integer", "null"),
        "largest IP packet through DST → SRC, bytes; null when not probed",
        lambda p: p.reverse if p else None,
    ),
    Field(
        "note",
        ("string",),
        "why a direction was not probed; only there when one was not",
        lambda p: p.note if p else None,
        when_set=True,
    ),
)


@dataclass(frozen=True, slots=True)
class MeasuredPath:
    """A path MTU probe between two ends' interfaces (a test's, ``u``'s, ``d``'s or a
    subnet's), with each end's MTU then and when it ran (wall clock): the Diagnoser keeps the
    last one per pair of ends."""

    src: str
    src_iface: str | None
    src_mtu: int | None
    dst: str
    dst_iface: str | None
    dst_mtu: int | None
    address: str
    path: PathMtu
    at: float

    @property
    def largest(self) -> int | None:
        """The largest packet that crossed either way, None when none did."""
        crossed = [v for v in (self.path.forward, self.path.reverse) if v is not None]
        return min(crossed) if crossed else None

    @property
    def ends(self) -> tuple[tuple[str, str | None], tuple[str, str | None]]:
        """Both ends in one order whichever sent first: a later probe either way replaces it."""
        a, b = (self.src, self.src_iface), (self.dst, self.dst_iface)
        return (a, b) if (a[0], a[1] or "") <= (b[0], b[1] or "") else (b, a)


@dataclass(frozen=True, slots=True)
class SubnetMtu:
    """What linkdeck measured about the MTU one subnet carries, while its hosts' MTUs were
    ``mtus``: the largest packet that crossed with don't-fragment between ``between`` (both
    ways), or None with ``note`` saying why it could not be probed."""

    subnet: str
    mtus: tuple[int, ...]
    between: tuple[str, str]
    largest: int | None = None
    note: str | None = None


@dataclass(frozen=True, slots=True)
class EndState:
    """One end of a test as the dashboard saw it: the interface carrying the test and what
    its counters did while the test ran."""

    host: str
    iface: Interface | None = None
    errors_during: int | None = None  # rx+tx errors counted during the test
    drops_during: int | None = None  # rx+tx drops (incl. NIC-level) during the test
    findings: tuple[Finding, ...] = ()  # current findings on this interface


@dataclass(frozen=True, slots=True)
class Cause:
    code: Code  # docs/TESTS.md's table of verdict causes: SPEED_LOW, MTU_MISMATCH, RETRANSMITS, …
    message: str
    evidence: str

    def as_dict(self) -> dict[str, str]:
        return write(self, CAUSE_JSON)


class Said(Protocol):
    """What a cause says, whoever ranks it (present/diagnose_page.Ranked too)."""

    @property
    def code(self) -> Code: ...
    @property
    def message(self) -> str: ...
    @property
    def evidence(self) -> str: ...


# A cause's (or a condition's) object in every JSON that carries one.
CAUSE_JSON: tuple[Field[Said], ...] = (
    Field("code", ("string",), "what was found: a code of docs/TESTS.md's tables", lambda c: c.code),
    Field("message", ("string",), "what it means, in one sentence", lambda c: c.message),
    Field("evidence", ("string",), "the figures it rests on", lambda c: c.evidence),
)


@dataclass(frozen=True, slots=True)
class Verdict:
    status: Status
    expected_bps: float | None
    pct_of_expected: float | None
    causes: tuple[Cause, ...] = ()
    summary: str = ""  # one plain-language line: "99% of the 941 Mb/s a clean 1 Gb/s path carries"
    # What kept the test from measuring the path alone (SHARED_PATH), said before any cause
    conditions: tuple[Cause, ...] = ()
