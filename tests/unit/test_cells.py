"""The column registry (cells.py): one entry is a column everywhere — the dashboard, the
help, `[ui] columns`, `linkdeck snapshot`, the host screen and a recording's report; a host
cell reaches the host's lines the same way."""

from __future__ import annotations

import types
from dataclasses import replace

import pytest

from linkdeck.commands import report_html
from linkdeck.commands.snapshot_format import snapshot_json, snapshot_table
from linkdeck.core import cells, units
from linkdeck.core.cells import Column, Sort
from linkdeck.core.levels import Tone
from linkdeck.recording.timeline import Series
from linkdeck.settings import config
from linkdeck.ui.screens.help_screen import columns_table
from linkdeck.ui.screens.host_screen import host_facts, interface_table
from linkdeck.ui.widgets.columns import fit, header_title
from tests.builders import iface, update, view

# Constructed: a made-up per-interface figure ("queue" = the MTU over ten) and a host-wide one.
QUEUE = Column(
    "queue",
    "Queue",
    "Made up for this test: a tenth of the MTU.",
    13,
    (6,),
    plain=("QUEUE",),
    words=lambda v, b: (str((v.iface.mtu or 0) // 10),),
    tone=lambda v: Tone.BAD if (v.iface.mtu or 0) >= 9000 else None,
    fact=True,
    host_screen=True,
    json=(cells.JsonField("queue", ("integer",), "made up for this test", lambda v: (v.iface.mtu or 0) // 10),),
)
RETR = Column(
    "retr",
    "Retr",
    "Made up for this test: the host's TCP retransmits.",
    14,
    (),
    host=lambda u, b: "0.25%" if u.interfaces else None,
)


@pytest.fixture
def registered(monkeypatch):
    """The registry with QUEUE and RETR added as a newcomer would add them: one entry each."""
    everything = (*cells._ALL, QUEUE, RETR)
    monkeypatch.setattr(cells, "_ALL", everything)
    monkeypatch.setattr(cells, "PLAIN", tuple(c for c in everything if c.plain and c.words))
    monkeypatch.setattr(cells, "COLUMNS", {c.id: c for c in sorted(everything, key=lambda c: c.priority)})


def one_host():
    return update("h1", 1.0, view(iface("eth0", mtu=9000), rx_bps=8e6), view(iface("eth1", mtu=1500)))


def test_a_new_interface_column_reaches_every_output(registered):
    # linkdeck snapshot: its header and its words on every interface's line (the old
    # snapshot_format kept its own header tuple and zipped the words to it: a 13th was dropped)
    lines = snapshot_table([one_host()]).splitlines()
    assert lines[1].split()[-1] == "QUEUE"
    assert lines[2].split()[0] == "eth0" and lines[2].split()[-1] == "900"
    assert lines[3].split()[-1] == "150"
    # the dashboard: [ui] columns accepts it, the layout places it, its text, header and tone
    assert config.parse('[ui]\ncolumns = ["rx", "queue"]\n').ui_columns == ("rx", "queue")
    placed = fit(200, ("rx", "queue")).placed[1]
    assert placed.column is QUEUE and header_title(placed, False, "60s") == "Queue"
    assert QUEUE.text(one_host().interfaces[0], False) == "900" and QUEUE.tone_of(one_host().interfaces[0]) is Tone.BAD
    # the help screen lists it with its words
    assert "Made up for this test" in "".join(
        str(cell) for column in columns_table("60s").columns for cell in column.cells
    )
    # the host screen's interface table
    table = interface_table(one_host(), False)
    assert [title for title, _ in table.headers][-1] == "QUEUE"
    assert [row[-1].plain for row, _ in table.rows] == ["900", "150"]
    # a recording's report: a fact, so among the interface's last facts
    assert report_html.iface_head()[-2:] == ("QUEUE", "ADDRESSES")
    timeline = types.SimpleNamespace(series={("h1", "eth0"): Series(iface=iface("eth0", mtu=1500))})
    assert report_html._iface_rows(timeline, "h1")[0][-2] == "150"
    # snapshot --json: its key after the other columns' (before the facts no column shows), and
    # the schema the docs hold, made from the same entries
    interfaces = snapshot_json([one_host()], now=2.0)["hosts"][0]["interfaces"]
    keys = list(interfaces[0])
    assert keys.index("queue") == keys.index("util_pct") + 1 and [i["queue"] for i in interfaces] == [900, 150]
    assert cells.interface_schema()["properties"]["queue"] == {
        "type": "integer",
        "description": "made up for this test",
    }


def test_a_new_host_cell_reaches_every_host_line(registered):
    host = one_host()
    assert snapshot_table([host]).splitlines()[0].endswith("  Retr 0.25%")
    assert "Retr       0.25%" in host_facts("h1", host).plain
    assert report_html._host_said(host) == " — Retr 0.25%"
    assert snapshot_table([update("h2", 1.0)]).splitlines()[0].endswith("live")  # nothing to say: nothing added


def test_the_registry_is_whole():
    header = cells.plain_header()
    sample = view(iface("eth0"), rx_bps=1e6, tx_bps=2e6, rx_pps=10.0, tx_pps=20.0)
    assert len(cells.plain_row(sample, False)) == len(header)  # one word per header, every column
    for c in cells.COLUMNS.values():
        assert c.sort is None or cells.SORTS.get(c.sort.id) is c.sort, f"{c.id}'s sort is not cycled by `s`"
        assert c.words is None or len(c.words(sample, False)) == len(c.plain), c.id
    assert [c.priority for c in cells.COLUMNS.values()] == sorted({c.priority for c in cells.COLUMNS.values()})
    assert config.UI_COLUMNS == tuple(cells.COLUMNS) and isinstance(cells.SORTS["name"], Sort)


async def test_the_dashboard_draws_a_new_column_and_a_new_host_cell(registered):
    from linkdeck.settings.config import HostSpec, Settings
    from linkdeck.ui.app import LinkdeckApp
    from tests.lab import wait_for
    from tests.synthetic import SyntheticAdapter, opener_for, physical

    adapter = SyntheticAdapter([physical("eth0", mtu=9000)], rate_bps={"eth0": 8e6})
    app = LinkdeckApp(
        Settings(interval=0.2, ui_columns=("rx", "queue", "retr")),
        [HostSpec("syn", address="syn.invalid")],
        opener=opener_for({"syn": adapter}),
    )
    async with app.run_test(size=(120, 20)):
        await wait_for(
            lambda: len(app.table.rows) == 2 and app.table.rows[1].view.rates.rx_bps is not None, 15.0, message="rates"
        )
        assert app.table.row_text(0).rstrip().endswith(" pps · Retr 0.25%")  # after the host's totals
        # a host cell takes no room in the interface rows: RX, then Queue, and nothing after
        assert [p.column.id for p in app.table.column_layout.placed] == ["rx", "queue"]
        assert app.table.row_text(1).split()[-1] == "900"
        assert "Queue" in app.table.render_line(0).text
        queue = next(seg for seg in app.table.row_strip(1) if seg.text.strip() == "900")
        assert queue.style.color.name == "red"


@pytest.mark.parametrize(
    "mbps, duplex, wide, narrow",
    [
        (1000, "full", "1G* full", "1G* F"),
        (10000, "half", "10G* half", "10G* H"),
        (100, "full", "100M* F", "100M*F"),  # "100M* full" would be cut to "100M* fu…"
        (2500, "full", "2.5G* F", "2.5G*F"),
        (100000, "full", "100G* F", "100G*F"),
    ],
)
def test_a_configured_speed_is_marked_in_every_width_and_never_cut(mbps, duplex, wide, narrow):
    speed = cells.COLUMNS["speed"]
    configured = view(iface("eth0", speed_mbps=mbps, duplex=duplex, speed_configured=True, reported_speed_mbps=None))
    assert (speed.text(configured, False), speed.text(configured, False, short=True)) == (wide, narrow)
    assert len(wide) <= speed.widths[0] and len(narrow) <= speed.widths[1]
    # a negotiated speed reads as it did
    negotiated = view(iface("eth0", speed_mbps=mbps, duplex=duplex))
    word = units.link_speed(mbps)
    assert (speed.text(negotiated, False), speed.text(negotiated, False, short=True)) == (
        f"{word} {duplex}",
        f"{word} {duplex[0].upper()}",
    )
    # the plain tables: snapshot, the host screen, the report's facts
    assert cells.plain_row(configured, False, (speed,)) == (f"{word}*", duplex)
    table = snapshot_table([update("h1", 1.0, configured)]).splitlines()
    assert table[2].split()[1:4] == ["physical", "up", f"{word}*"]
    assert "* after a speed: set in the config's [speed], not negotiated." in table  # said where it is shown
    assert "[speed]" not in snapshot_table([update("h1", 1.0, negotiated)])
    assert f"{word}*" in [cell.plain for cell in interface_table(update("h1", 1.0, configured), False).rows[0][0]]
    timeline = types.SimpleNamespace(series={("h1", "eth0"): Series(iface=configured.iface)})
    assert f"{word}*" in report_html._iface_rows(timeline, "h1")[0]
    assert (
        report_html._configured_note(timeline, "h1") == "* after a speed: set in the config's [speed], not negotiated."
    )
    # the help says what the mark means
    assert "* after the speed: set in the config's [speed], not negotiated" in speed.help


@pytest.mark.parametrize(
    "rx_bps, speed, cell",
    [
        (0.0, 1000, "0%"),
        (4e3, 1000, "<1%"),
        (5.1e6, 1000, "<1%"),
        (10e6, 1000, "1.0%"),
        (94e6, 1000, "9.4%"),
        (95e6, 1000, "10%"),
        (924e6, 1000, "92%"),
        (1e9, 1000, "100%"),
    ],
)
def test_util_is_a_whole_value_in_every_width(rx_bps, speed, cell):
    util = cells.COLUMNS["util"]
    v = replace(
        view(iface("eth0", speed_mbps=speed, duplex="full"), rx_bps=rx_bps, tx_bps=0.0),
        util_pct=units.utilisation(rx_bps, 0.0, speed, "full"),
    )
    assert util.text(v, False) == util.text(v, False, short=True) == cell
    assert len(cell) <= min(util.widths)
    # the exact figure stays where there is room for it: snapshot's plain table and JSON
    assert cells.plain_row(v, False, (util,)) == (units.percent(v.util_pct),)


def test_snapshot_says_what_a_host_could_not_give_under_its_name():
    # constructed: a busybox host without ss whose `ip -j addr` had one link it could not read
    from linkdeck.core.model import HostDetail

    missing = ("no ss: no per-flow view (w)", "facts of 1 link unavailable: ip -j addr: \x1b[31mRED: 'mtu' is not")
    lines = snapshot_table([replace(one_host(), detail=HostDetail(missing=missing))]).splitlines()
    assert lines[1] == (
        "  missing: no ss: no per-flow view (w); facts of 1 link unavailable: ip -j addr: \\x1b[31mRED: 'mtu' is not"
    )
    assert lines[2].split()[0] == "IFACE"
    assert not [ln for ln in snapshot_table([one_host()]).splitlines() if "missing" in ln]
