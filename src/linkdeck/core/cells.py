"""Every column linkdeck shows, one entry each: its name in ``[ui] columns``, its headers, its
help, how its words come from an interface (or a host), its short form, its sort and its tone.

The dashboard (ui/widgets/columns.py, ui/state/rows.py, ui/widgets/table.py, the help screen), ``linkdeck snapshot``
(commands/snapshot_format.py), the host screen (ui/screens/host_screen.py), a recording's report
(commands/report_html.py) and ``[ui] columns`` validation (config.py) all read this table, so a
new column is one entry here plus its test. Headless: a tone, never a terminal style.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable

from . import units
from .jsonfields import Field, schema
from .kinds import Kind, is_down
from .levels import Tone
from .model import Counters, HostUpdate, Interface, InterfaceView, Rates

HOT_UTIL_PCT = 90.0  # utilisation drawn as trouble from here


def errors_ps(view: InterfaceView) -> float | None:
    return units.sum_known(view.rates.rx_errors_ps, view.rates.tx_errors_ps)


def drops_ps(view: InterfaceView) -> float | None:
    return units.sum_known(view.rates.rx_drops_ps, view.rates.tx_drops_ps)


def facts_view(iface: Interface) -> InterfaceView:
    """An interface with no rates: what a report of its facts reads through the columns."""
    return InterfaceView(iface, Rates(), Counters())


@dataclass(frozen=True, slots=True)
class Sort:
    id: str
    label: str  # in the dashboard's status line: "sort RX"
    value: Callable[[InterfaceView], float | None] | None  # biggest first, unknown last; None: by name


BY_NAME = Sort("name", "name", None)
BY_RX = Sort("rx", "RX", lambda v: v.rates.rx_bps)
BY_TX = Sort("tx", "TX", lambda v: v.rates.tx_bps)
BY_UTIL = Sort("util", "utilisation", lambda v: v.util_pct)
BY_TROUBLE = Sort("errors", "errors+drops", lambda v: units.sum_known(errors_ps(v), drops_ps(v)))
# The order `s` cycles through; every column's sort must be here (tests/unit/test_cells.py checks).
SORTS = {s.id: s for s in (BY_NAME, BY_RX, BY_TX, BY_UTIL, BY_TROUBLE)}


@dataclass(frozen=True, slots=True)
class JsonField(Field[InterfaceView]):
    """One key of an interface's object in ``snapshot --json``: its JSON Schema type(s), what
    it means (the schema's description) and its value for an interface, a measured figure
    rounded to ``digits``."""

    digits: int | None = 1


Words = Callable[[InterfaceView, bool], tuple[str, ...]]  # (view, in bytes?) → one word per plain header
Draw = Callable[
    [InterfaceView, bool, bool, tuple[str, ...]], str
]  # (view, in bytes?, short?, words) → the dashboard's text


@dataclass(frozen=True, slots=True)
class Column:
    id: str  # its name in [ui] columns
    title: str  # the dashboard's header
    help: str  # what it means: the help screen and the README
    priority: int  # the dashboard's default order: the first to show, the last to drop when narrow
    widths: tuple[int, ...] = (
        8,
    )  # on the dashboard, widest first; a narrower one draws the short form (none for a host-only column)
    align: str = "r"  # "l" or "r"
    short_title: str | None = None  # the header at a narrower width
    plain: tuple[str, ...] = ()  # its headers in plain tables (snapshot, host screen, report), one per word
    words: Words | None = None  # None: a cell the dashboard draws itself (graphs, last test)
    draw: Draw | None = None  # the dashboard's text; default: the words joined by a space
    sort: Sort | None = None  # the sort a click on its header picks
    tone: Callable[[InterfaceView], Tone | None] | None = None  # its colour, from the values it shows
    bold: bool = False  # drawn bold when it has a tone
    units_in_title: bool = False  # the header says b/s or B/s
    fact: bool = False  # read from the interface's facts alone: a recording's report prints it
    host_screen: bool = False  # in the host screen's interface table
    host: Callable[[HostUpdate, bool], str | None] | None = (
        None  # its text for a whole host (host rows, snapshot, host screen)
    )
    json: tuple[JsonField, ...] = ()  # its keys in an interface's object of `snapshot --json`, unrounded values

    @property
    def host_only(self) -> bool:
        """Says something about a whole host and nothing per interface: no room in the rows."""
        return self.words is None and self.host is not None

    def text(self, view: InterfaceView, in_bytes: bool, short: bool = False) -> str:
        """The dashboard's text for an interface ("" for a column the dashboard draws itself)."""
        if self.words is None:
            return ""
        words = self.words(view, in_bytes)
        return self.draw(view, in_bytes, short, words) if self.draw else " ".join(words)

    def tone_of(self, view: InterfaceView) -> Tone | None:
        return self.tone(view) if self.tone else None


def _name(text: object) -> str:
    return units.printable(str(text))


def _rate(bits: float | None, in_bytes: bool) -> str:
    return units.rate(bits, in_bytes)


def _short_rate(bits: float | None, in_bytes: bool) -> str:
    return units.rate(None) if bits is None else units.si(bits / 8 if in_bytes else bits, "").rstrip()


def _trouble(
    is_trouble: Callable[[float], bool], value: Callable[[InterfaceView], float | None]
) -> Callable[[InterfaceView], Tone | None]:
    """A tone for a number that is trouble past a line (unknown is none)."""

    def tone(view: InterfaceView) -> Tone | None:
        v = value(view)
        return Tone.BAD if v is not None and is_trouble(v) else None

    return tone


def _oper_tone(view: InterfaceView) -> Tone | None:
    if view.iface.oper == "up":
        return Tone.GOOD
    return Tone.BAD if is_down(view.iface) else None


CONFIGURED = "*"  # after a speed the config's [speed] set: not what the link negotiated
CONFIGURED_SAID = "set in the config's [speed], not negotiated"
SPEED_WIDTHS = (9, 6)


def configured_note(ifaces: Iterable[Interface]) -> str | None:
    """The plain tables' footnote for the mark, where one of ``ifaces`` carries it."""
    return f"{CONFIGURED} after a speed: {CONFIGURED_SAID}." if any(i.speed_configured for i in ifaces) else None


def speed_word(iface: Interface) -> str:
    """The speed as a cell says it: ``10G``, or ``10G*`` where it comes from ``[speed]``."""
    return units.link_speed(iface.speed_mbps) + (CONFIGURED if iface.speed_configured else "")


def _speed(view: InterfaceView, in_bytes: bool, short: bool, words: tuple[str, ...]) -> str:
    speed, duplex = words[0], view.iface.duplex
    if units.duplex(duplex) == units.duplex(None):
        return speed
    # the configured mark must never be cut: "100M* F", then "100M*F", rather than "100M* fu…"
    width = SPEED_WIDTHS[1 if short else 0]
    tries = (
        f"{speed} {units.duplex(duplex, short)}",
        f"{speed} {units.duplex(duplex, True)}",
        f"{speed}{units.duplex(duplex, True)}",
    )
    return next((t for t in tries if len(t) <= width), tries[-1])


_OPER_SHORT = {"lowerlayerdown": "lldn", "dormant": "dorm", "unknown": "?", "notpresent": "gone", "testing": "test"}
_KIND_SHORT: dict[str, str] = {
    Kind.PHYSICAL: "phys",
    Kind.LOOPBACK: "lo",
    Kind.BRIDGE: "br",
    Kind.WIRELESS: "wifi",
    Kind.TUNNEL: "tun",
    Kind.VIRTUAL: "virt",
}

NAME = Column(
    "name",
    "Interface",
    "The host, then its interfaces; a vlan or vnic is indented under what it runs on, bond members under "
    "the bond. * marks the interface that carries the default route.",
    0,
    (20, 16, 14),
    "l",
    sort=BY_NAME,
    plain=("IFACE",),
)

# In plain-table order (snapshot, host screen, report); ``priority`` orders the dashboard.
_ALL = (
    Column(
        "kind",
        "Kind",
        "physical, bond, vlan, bridge, vnic, loopback, tunnel, wireless … (shortened when narrow).",
        10,
        (8, 4),
        "l",
        plain=("KIND",),
        words=lambda v, b: (_name(v.iface.kind),),
        draw=lambda v, b, short, w: _KIND_SHORT.get(w[0], w[0][:4]) if short else w[0],
        fact=True,
        host_screen=True,
        json=(
            JsonField(
                "kind",
                ("string",),
                "loopback, physical, virtual, bridge, vlan, bond, vnic, tunnel, wireless, unknown",
                lambda v: v.iface.kind,
            ),
        ),
    ),
    Column(
        "oper",
        "Oper",
        "Operational state: up, down, lldn (lower layer down), dorm (dormant), ? (unknown).",
        1,
        (4,),
        "l",
        plain=("OPER",),
        words=lambda v, b: (_name(v.iface.oper),),
        draw=lambda v, b, short, w: _OPER_SHORT.get(w[0], w[0]),
        tone=_oper_tone,
        fact=True,
        host_screen=True,
        json=(
            JsonField(
                "oper",
                ("string",),
                "operational state: up, down, lowerlayerdown, dormant, unknown …",
                lambda v: v.iface.oper,
            ),
        ),
    ),
    Column(
        "speed",
        "Speed/dup",
        f"Negotiated speed and duplex (full or half; F/H when narrow); {CONFIGURED} after the speed: {CONFIGURED_SAID} "
        "(the interface screen says what the host reports).",
        2,
        SPEED_WIDTHS,
        "l",
        "Speed",
        plain=("SPEED", "DUP"),
        words=lambda v, b: (speed_word(v.iface), units.duplex(v.iface.duplex)),
        draw=_speed,
        fact=True,
        host_screen=True,
        json=(
            JsonField(
                "speed_mbps",
                ("integer", "null"),
                "negotiated speed in Mb/s (or the config's [speed])",
                lambda v: v.iface.speed_mbps,
            ),
            JsonField(
                "speed_configured",
                ("boolean",),
                "speed_mbps comes from the config's [speed]",
                lambda v: v.iface.speed_configured,
            ),
            JsonField("duplex", ("string", "null"), "full or half", lambda v: v.iface.duplex),
        ),
    ),
    Column(
        "mtu",
        "MTU",
        "Largest IP packet the interface sends, in bytes.",
        3,
        (5,),
        plain=("MTU",),
        words=lambda v, b: (units.mtu(v.iface.mtu),),
        fact=True,
        host_screen=True,
        json=(JsonField("mtu", ("integer", "null"), "largest IP packet sent, in bytes", lambda v: v.iface.mtu),),
    ),
    Column(
        "rx",
        "RX",
        "Received per second over the last interval (bit/s, or bytes/s after b).",
        4,
        (10, 6),
        short_title="RX b/s",
        plain=("RX",),
        words=lambda v, b: (_rate(v.rates.rx_bps, b),),
        draw=lambda v, b, short, w: _short_rate(v.rates.rx_bps, b) if short else w[0],
        sort=BY_RX,
        units_in_title=True,
        host_screen=True,
        json=(
            JsonField("rx_bps", ("number", "null"), "received, bit/s over the last interval", lambda v: v.rates.rx_bps),
        ),
    ),
    Column(
        "tx",
        "TX",
        "Sent per second over the last interval.",
        5,
        (10, 6),
        short_title="TX b/s",
        plain=("TX",),
        words=lambda v, b: (_rate(v.rates.tx_bps, b),),
        draw=lambda v, b, short, w: _short_rate(v.rates.tx_bps, b) if short else w[0],
        sort=BY_TX,
        units_in_title=True,
        host_screen=True,
        json=(JsonField("tx_bps", ("number", "null"), "sent, bit/s over the last interval", lambda v: v.rates.tx_bps),),
    ),
    Column(
        "pps",
        "RX pps TX pps",
        "Packets per second received and sent.",
        9,
        (13,),
        plain=("RXpps", "TXpps"),
        words=lambda v, b: (units.per_second(v.rates.rx_pps), units.per_second(v.rates.tx_pps)),
        draw=lambda v, b, short, w: f"{w[0]:>6} {w[1]:>6}",
        json=(
            JsonField("rx_pps", ("number", "null"), "packets received per second", lambda v: v.rates.rx_pps),
            JsonField("tx_pps", ("number", "null"), "packets sent per second", lambda v: v.rates.tx_pps),
        ),
    ),
    Column(
        "errors",
        "Err/s",
        "RX + TX errors per second (red when not 0).",
        6,
        (6, 5),
        plain=("ERR/s",),
        words=lambda v, b: (units.per_second(errors_ps(v)),),
        sort=BY_TROUBLE,
        tone=_trouble(lambda x: x > 0, errors_ps),
        bold=True,
        json=(
            JsonField("rx_errors_ps", ("number", "null"), "receive errors per second", lambda v: v.rates.rx_errors_ps),
            JsonField("tx_errors_ps", ("number", "null"), "transmit errors per second", lambda v: v.rates.tx_errors_ps),
        ),
    ),
    Column(
        "drops",
        "Drop/s",
        "RX + TX drops per second (red when not 0).",
        7,
        (6, 5),
        short_title="Drp/s",
        plain=("DROP/s",),
        words=lambda v, b: (units.per_second(drops_ps(v)),),
        sort=BY_TROUBLE,
        tone=_trouble(lambda x: x > 0, drops_ps),
        bold=True,
        json=(
            JsonField("rx_drops_ps", ("number", "null"), "receive drops per second", lambda v: v.rates.rx_drops_ps),
            JsonField("tx_drops_ps", ("number", "null"), "transmit drops per second", lambda v: v.rates.tx_drops_ps),
        ),
    ),
    Column(
        "util",
        "Util",
        "Percent of the negotiated speed: the busier direction on full duplex, RX + TX on half duplex; "
        "red from 90 %; — when the speed is unknown.",
        8,
        (5, 4),
        plain=("UTIL",),
        words=lambda v, b: (units.percent(v.util_pct),),
        draw=lambda v, b, short, words: units.percent_cell(v.util_pct),
        sort=BY_UTIL,
        tone=_trouble(lambda x: x >= HOT_UTIL_PCT, lambda v: v.util_pct),
        bold=True,
        json=(
            JsonField(
                "util_pct",
                ("number", "null"),
                "percent of the negotiated speed; null without a speed",
                lambda v: v.util_pct,
                digits=2,
            ),
        ),
    ),
    Column(
        "graphs",
        "graphs",
        "RX (cyan) and TX (magenta) over the last minute. A full cell is, as the header says, the interface's own "
        "busiest sample of the minute (peak, the default: any traffic shows) or, after `a`, its link speed (link; "
        "where the speed is unknown — veth, bridge, tunnel … — the busiest rate any interface of that host carried); "
        "never below 1 Mb/s, so an idle link's stray packet stays a baseline.",
        11,
        (31, 21),
        "l",
    ),
    Column(
        "test",
        "Last test",
        "The verdict of the last throughput test through this interface (t), on both ends: → where it ran "
        "from (the sender), ← where it ran to (the receiver); a ceiling (c) has no arrow. Enter on the row says "
        "which host was at the other end.",
        12,
        (14,),
        "l",
    ),
    # a whole host's: its TCP segments retransmitted ÷ sent over the last interval
    Column(
        "retr",
        "Retr",
        "On a host's row: the share of the TCP segments it sent that were retransmissions over the last "
        "interval (its own counters: every transfer, not only linkdeck's); nothing when it sent none or its "
        "OS does not say.",
        13,
        (),
        host=lambda u, b: None if u.tcp is None or u.tcp.retrans_pct is None else units.percent(u.tcp.retrans_pct),
    ),
)

# An interface's facts that no column shows, after the columns' keys in `snapshot --json`.
NAME_JSON = JsonField("name", ("string",), "the interface's name as the host gives it", lambda v: v.iface.name)
FACTS_JSON = (
    JsonField(
        "addresses",
        ("array",),
        "its addresses with their prefix length",
        lambda v: list(v.iface.addresses),
        items="string",
    ),
    JsonField("mac", ("string", "null"), "its hardware address", lambda v: v.iface.mac),
    JsonField("default_route", ("boolean",), "it carries the host's default route", lambda v: v.iface.default_route),
    JsonField("over", ("string", "null"), "what it runs on: a vlan's parent, a vnic's link", lambda v: v.iface.over),
    JsonField("members", ("array",), "a bond's or bridge's members", lambda v: list(v.iface.members), items="string"),
    JsonField(
        "reported_speed_mbps",
        ("integer", "null"),
        "the speed the host itself reports, Mb/s (speed_mbps is the config's [speed] where speed_configured); "
        "null where none",
        lambda v: v.iface.reported_speed_mbps if v.iface.speed_configured else v.iface.speed_mbps,
    ),
    JsonField(
        "supported_speeds_mbps",
        ("array",),
        "the speeds its NIC can negotiate, Mb/s, where the host says",
        lambda v: list(v.iface.supported_speeds_mbps),
        items="integer",
    ),
    JsonField(
        "carrier_changes",
        ("integer", "null"),
        "times its link went up or down since the host started, where the host counts them",
        lambda v: v.iface.carrier_changes,
    ),
    JsonField(
        "driver", ("string", "null"), "its driver (ethtool -i, or the OS's name for it)", lambda v: v.iface.driver
    ),
    JsonField(
        "driver_version", ("string", "null"), "its driver's version (ethtool -i)", lambda v: v.iface.driver_version
    ),
    JsonField(
        "firmware_version",
        ("string", "null"),
        "its NIC's firmware version (ethtool -i)",
        lambda v: v.iface.firmware_version,
    ),
    JsonField(
        "offload",
        ("array", "null"),
        "the segmentation and receive offloads switched on, by ethtool -k's names; null where not read",
        lambda v: None if v.iface.offload is None else list(v.iface.offload),
        items="string",
    ),
    JsonField("ring_rx", ("integer", "null"), "receive ring size, descriptors", lambda v: v.iface.ring_rx),
    JsonField("ring_rx_max", ("integer", "null"), "largest receive ring the NIC allows", lambda v: v.iface.ring_rx_max),
    JsonField("ring_tx", ("integer", "null"), "transmit ring size, descriptors", lambda v: v.iface.ring_tx),
    JsonField(
        "ring_tx_max", ("integer", "null"), "largest transmit ring the NIC allows", lambda v: v.iface.ring_tx_max
    ),
    JsonField(
        "extra",
        ("array",),
        "anything else the host said of it (a media line, a bridge, a zone), as the interface screen shows it",
        lambda v: list(v.iface.extra),
        of=(
            Field("label", ("string",), "what it is", lambda pair: pair[0]),
            Field("value", ("string",), "what the host said", lambda pair: pair[1]),
        ),
    ),
)


def json_fields() -> tuple[JsonField, ...]:
    """Every key of an interface's object in `snapshot --json`, in order: its name, each
    column's keys in plain-table order, then the facts no column shows."""
    return (NAME_JSON, *(f for c in _ALL for f in c.json), *FACTS_JSON)


def interface_schema() -> dict[str, Any]:
    """The JSON Schema of an interface's object, as docs/schema/snapshot.schema.json holds it
    (tests/test_json_schemas.py keeps the two equal)."""
    return schema(json_fields())


# Read through the module (cells.PLAIN, not a copy taken at import): a test adds a column here.
PLAIN = tuple(c for c in _ALL if c.plain and c.words)  # the columns of plain tables, in their order
COLUMNS = {c.id: c for c in sorted(_ALL, key=lambda c: c.priority)}  # the dashboard's, by priority
COLUMN_IDS = tuple(COLUMNS)  # the default of [ui] columns


def plain_header(columns: Iterable[Column] | None = None) -> tuple[str, ...]:
    return tuple(h for c in (PLAIN if columns is None else columns) for h in c.plain)


def plain_row(view: InterfaceView, in_bytes: bool, columns: Iterable[Column] | None = None) -> tuple[str, ...]:
    """An interface's words under plain_header."""
    return tuple(w for c in (PLAIN if columns is None else columns) if c.words for w in c.words(view, in_bytes))


def host_cells(update: HostUpdate, in_bytes: bool, columns: Iterable[Column] | None = None) -> list[tuple[Column, str]]:
    """(column, text) of every column that has something to say about the whole host."""
    out = []
    for c in COLUMNS.values() if columns is None else columns:
        text = c.host(update, in_bytes) if c.host else None
        if text is not None:
            out.append((c, _name(text)))
    return out
