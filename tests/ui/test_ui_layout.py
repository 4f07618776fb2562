"""The dashboard fitted to its terminal, driven with a pilot: frozen names while scrolling
sideways, folding, sorting across hosts, header clicks, the wheel, the column picker and its
kept choice, and a layout computed per width rather than per tick."""

from __future__ import annotations

import json

import pytest
from rich.console import Console
from rich.style import Style
from textual.events import MouseScrollDown
from textual.widgets import SelectionList

from linkdeck.core.cells import COLUMNS
from linkdeck.core.model import HostState, HostUpdate
from linkdeck.settings.config import UI_COLUMNS, HostSpec, Settings
from linkdeck.ui.app import LinkdeckApp
from linkdeck.ui.messages import HostUpdated
from linkdeck.ui.screens.help_screen import HelpScreen
from linkdeck.ui.screens.hostkey_screen import HostKeyScreen
from tests.lab import wait_for
from tests.synthetic import opener_for
from tests.ui.test_ui_snapshot import HOSTS, feed_five, five_host_app, five_hosts

NAMES = ("nas01", "lagg0", "igb0", "igb1", "vlan10", "lo0", "web1")


def screen_lines(app: LinkdeckApp) -> list[str]:
    return [app.table.screen_text(y) for y in range(app.table.size.height)]


def shown(app: LinkdeckApp) -> list[str]:
    return [r.host if r.is_host else r.view.iface.name for r in app.table.rows]


async def test_scrolling_right_keeps_the_names_and_reaches_every_column(monkeypatch):
    app = five_host_app(monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        await feed_five(app, pilot, steps=3)
        before = screen_lines(app)
        assert before[0].startswith("Interface▲") and "Util" in before[0] and "Last test" not in before[0]
        for _ in range(12):
            await pilot.press("right")
        await pilot.pause()
        assert app.table.scroll_offset.x > 0
        after = screen_lines(app)
        # the other columns moved: the last ones are on screen now, the first ones are gone
        assert "Last test" in after[0] and "Oper" not in after[0]
        # every name is still where it was, in the frozen column
        name_w = app.table.column_layout.name_w
        for y, line in enumerate(before[: len(NAMES) + 1]):
            assert after[y][:name_w] == line[:name_w]
        for name in NAMES:
            assert any(line[:name_w].strip(" *▾▸") == name for line in after), name
        # host rows do not scroll: their state stays readable
        assert "truenas 13.0  live" in after[1]
        right = app.table.scroll_offset.x
        await pilot.press("left")
        await pilot.pause()
        assert 0 < app.table.scroll_offset.x < right


async def test_enter_folds_a_host_z_folds_all_and_an_unknown_key_still_means_trust(monkeypatch):
    app = five_host_app(monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        await feed_five(app, pilot, steps=2)
        assert app.table.selected.key == ("host", "nas01")
        await pilot.press("enter")
        assert shown(app)[:3] == ["nas01", "web1", "docker0"]
        assert app.table.row_text(0).startswith("▸ nas01")
        await pilot.press("enter")
        assert shown(app)[:2] == ["nas01", "lagg0"] and app.table.row_text(0).startswith("▾ nas01")
        # space on an interface row folds its host and keeps the host row selected
        await pilot.press("down", "space")
        assert shown(app)[:2] == ["nas01", "web1"] and app.table.selected.key == ("host", "nas01")
        await pilot.press("z")
        assert shown(app) == list(HOSTS)
        await pilot.press("z")
        assert "ixgbe0" in shown(app)
        # Enter on a host whose key is unknown opens the trust dialog, as before
        app.table.select_key(("host", "edge"))
        await pilot.press("enter")
        await wait_for(lambda: isinstance(app.screen, HostKeyScreen), 5.0, message="the trust dialog")


async def test_sort_keeps_hosts_together_unless_asked_and_a_header_click_sorts(monkeypatch):
    app = five_host_app(monkeypatch)
    async with app.run_test(size=(120, 30)) as pilot:
        await feed_five(app, pilot, steps=2)
        # a click on the RX header: biggest first inside each host
        layout = app.table.column_layout
        rx = next(p for p in layout.placed if p.column.id == "rx")
        await pilot.click("#table", offset=(layout.frozen_w + rx.x + 2, 0))
        assert app.view.sort == "rx"
        assert shown(app)[:3] == ["nas01", "lagg0", "igb0"] and "web1" in shown(app)
        assert "▼RX" in app.table.screen_text(0)
        # g: one list across hosts, the busiest interface of the fleet first
        await pilot.press("g")
        fleet = sorted(
            ((v.rates.rx_bps, u.host, v.iface.name) for u in five_hosts(1) for v in u.interfaces), reverse=True
        )
        assert [r.key for r in app.table.rows[:3]] == [("iface", h, n) for _, h, n in fleet[:3]]
        assert {r.host for r in app.table.rows[:3]} != {app.table.rows[0].host}  # hosts mixed
        assert not any(r.is_host for r in app.table.rows)
        assert app.table.row_text(0).lstrip(" *").startswith("zone1/")
        assert "across hosts" in str(app.query_one("#status").render())
        await pilot.press("g")
        assert app.table.rows[0].is_host
        # a click on the name header sorts by name again
        await pilot.click("#table", offset=(2, 0))
        assert app.view.sort == "name"


async def test_the_wheel_scrolls_the_table(monkeypatch):
    app = five_host_app(monkeypatch)
    async with app.run_test(size=(80, 12)) as pilot:
        await feed_five(app, pilot, steps=2)
        assert app.table.scroll_offset.y == 0
        table = app.table
        for _ in range(3):
            table.post_message(MouseScrollDown(table, 5, 5, 0, 0, 0, False, False, False, screen_x=5, screen_y=5))
        await wait_for(lambda: table.scroll_offset.y > 0, 5.0, message="scrolled by the wheel")
        await pilot.pause()
        first = table.screen_text(1)
        assert not first.startswith("▾ nas01") and table.screen_text(0).startswith("Interface")
        # the layout leaves room for the vertical scrollbar: Util is whole
        await feed_five(app, pilot, steps=3)
        assert table.scrollable_content_region.width == 79 and table.screen_text(0).rstrip().endswith("Util→")


async def test_column_picker_choice_is_drawn_and_kept(monkeypatch, tmp_path):
    state = tmp_path / "ui-state.json"
    import linkdeck.findings.engine
    from tests.ui.test_ui_snapshot import FixedFindings

    monkeypatch.setattr(linkdeck.findings.engine, "Diagnoser", FixedFindings)
    hosts = [HostSpec(n, address=f"{n}.invalid") for n in HOSTS]
    app = LinkdeckApp(Settings(), hosts, opener=opener_for({}), state_path=state)
    async with app.run_test(size=(80, 24)) as pilot:
        await feed_five(app, pilot, steps=2)
        await pilot.press("o")
        picker = app.screen.query_one(SelectionList)
        picker.deselect_all()
        await pilot.press("escape")  # none left: the picker says so and stays open
        assert app.screen.query_one(SelectionList) is picker and app.view.columns == UI_COLUMNS
        picker.select_all()
        picker.deselect("oper")
        picker.deselect("speed")
        picker.deselect("mtu")
        await pilot.press("escape")
        await pilot.pause()
        assert app.view.columns == tuple(c for c in UI_COLUMNS if c not in ("oper", "speed", "mtu"))
        header = app.table.screen_text(0)
        assert "Oper" not in header and "MTU" not in header and "RX pps" in header
    assert json.loads(state.read_text())["columns"] == list(app.view.columns)
    again = LinkdeckApp(Settings(), hosts, opener=opener_for({}), state_path=state)
    assert again.view.columns == app.view.columns
    # a config whose list changed since wins over the kept choice
    assert LinkdeckApp(
        Settings(ui_columns=("rx", "tx")), hosts, opener=opener_for({}), state_path=state
    ).view.columns == ("rx", "tx")
    # the next session says at start that a saved layout is in use, and where it is kept
    async with again.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        (notice,) = [n for n in again._notifications if n.title == "saved layout"]
        assert str(state) in notice.message and "o changes them" in notice.message
    fresh = LinkdeckApp(Settings(), hosts, opener=opener_for({}), state_path=tmp_path / "other.json")
    async with fresh.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert [n for n in fresh._notifications if n.title == "saved layout"] == []


def test_the_column_choice_is_kept_per_config_file(monkeypatch, tmp_path):
    from linkdeck.settings.config import ui_state_path

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    default = tmp_path / "xdg" / "linkdeck" / "config.toml"
    lab, home = tmp_path / "lab.toml", tmp_path / "home.toml"
    assert ui_state_path(None) == ui_state_path(default) == tmp_path / "xdg" / "linkdeck" / "ui-state.json"
    assert ui_state_path(lab) != ui_state_path(home) and ui_state_path(lab).parent == default.parent
    assert ui_state_path(lab) == ui_state_path(tmp_path / "." / "lab.toml")  # one file, however it is named


@pytest.mark.parametrize("size", [(80, 24), (200, 60)], ids=["80x24", "200x60"])
async def test_column_picker_marks_read_without_colour_and_its_order_holds(monkeypatch, tmp_path, size):
    import linkdeck.findings.engine
    from tests.ui.test_ui_snapshot import FixedFindings

    monkeypatch.setattr(linkdeck.findings.engine, "Diagnoser", FixedFindings)
    hosts = [HostSpec(n, address=f"{n}.invalid") for n in HOSTS]
    app = LinkdeckApp(Settings(), hosts, opener=opener_for({}), state_path=tmp_path / "ui-state.json")

    def lines(picker) -> list[str]:
        return ["".join(seg.text for seg in picker.render_line(y)).strip() for y in range(picker.option_count)]

    async with app.run_test(size=size) as pilot:
        await feed_five(app, pilot, steps=2)
        await pilot.press("o")
        picker = app.screen.query_one(SelectionList)
        first = lines(picker)
        assert all(line.startswith("[x] ") for line in first), first
        order = [picker.get_option_at_index(i).value for i in range(picker.option_count)]
        picker.deselect("oper")
        await pilot.pause()
        assert lines(picker)[order.index("oper")].startswith("[ ] Oper")
        await pilot.press("escape")
        await pilot.pause()
        assert "oper" not in app.view.columns
        await pilot.press("o")
        picker = app.screen.query_one(SelectionList)
        # the column turned off stays where it was, marked off
        assert [picker.get_option_at_index(i).value for i in range(picker.option_count)] == order
        assert lines(picker)[order.index("oper")].startswith("[ ] Oper")


async def test_layout_is_computed_per_width_not_per_tick(monkeypatch):
    app = five_host_app(monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        await feed_five(app, pilot, steps=5)
        computed = app.table.layouts_computed
        await feed_five(app, pilot, steps=30)
        assert app.table.layouts_computed == computed
        await pilot.resize_terminal(200, 40)
        per_interface = [c for c in UI_COLUMNS if not COLUMNS[c].host_only]  # retr speaks on host rows only
        await wait_for(
            lambda: app.table.column_layout.fitted == len(per_interface), 5.0, message="refitted to 200 columns"
        )
        assert app.table.layouts_computed == computed + 1
        assert "Last test" in app.table.screen_text(0)


async def test_help_has_a_legend_of_every_mark_and_column(monkeypatch):
    app = five_host_app(monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        await feed_five(app, pilot, steps=2)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        console = Console(width=76, color_system=None)
        with console.capture() as capture:
            console.print(app.screen.query_one("#help-body").content)
        text = capture.get()
    for needle in (
        "✖2",
        "⚠1",
        "ℹ1",
        "*eth0",
        "default route",
        "— ",
        "unknown",
        "Util",
        "Percent of the negotiated speed",
        "Err/s",
        "Last test",
        "findings",
        "lldn",
        "Pick which columns show",
    ):
        assert needle in text, needle


async def test_header_counts_hosts_and_findings(monkeypatch):
    app = five_host_app(monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        await feed_five(app, pilot, steps=2)
        status = str(app.query_one("#status").render())
        assert status.startswith("5 hosts: 3 live, 1 reconnecting, 1 host key unknown")
        assert "findings ✖1 ⚠2" in status
        app.post_message(HostUpdated(HostUpdate(host="db2", os="linux", state=HostState.LIVE, time=1.0)))
        await wait_for(
            lambda: "4 live, 1 host key unknown" in str(app.query_one("#status").render()),
            5.0,
            message="counts follow the states",
        )
        app.post_message(HostUpdated(HostUpdate(host="db2", os=None, state=HostState.CONNECTING)))
        await wait_for(
            lambda: "3 live, 1 connecting, 1 host key unknown" in str(app.query_one("#status").render()),
            5.0,
            message="a first connection is not a reconnection",
        )


def test_the_dashboard_doc_lists_every_app_key_and_mark():
    from pathlib import Path

    from linkdeck.ui.bindings import APP_KEYS, key_label
    from linkdeck.ui.widgets.marks import LEGEND

    doc = (Path(__file__).resolve().parents[2] / "docs" / "DASHBOARD.md").read_text()
    keys = doc[doc.index("## Keys") :]
    for k in APP_KEYS:
        label = key_label(k.key)
        assert f"`{label}`" in keys or f"| {label} " in keys or f"{label} /" in keys or f"{label} clears" in keys, label
    for sample, _style, _meaning in LEGEND:
        if sample[0] in "✖⚠ℹ*▾—":
            assert sample[0] in keys, sample


def test_finding_evidence_wraps_at_words_under_itself():
    from linkdeck.ui.widgets.findings_pane import finding_text
    from tests.ui.test_ui_snapshot import FINDINGS

    console = Console(width=60, color_system=None)
    with console.capture() as capture:
        console.print(finding_text(FINDINGS[:1], title="Findings"))
    lines = capture.get().rstrip("\n").split("\n")
    assert lines[0] == "Findings" and lines[1].startswith("✖ ERROR ERRORS_RISING web1/enp3s0f0:")
    indent = len("✖ ERROR ")
    # every line after the headline sits under the text column, and no word is cut in two
    assert all(line.startswith(" " * indent) for line in lines[2:])
    f = FINDINGS[0]
    words = {*f.message.split(), *f.evidence.split(), *f.hint.split(), "evidence:", "next:"}
    shown = [w for line in lines[2:] for w in line.split()]
    assert {"million", "(ethtool", "+90)"} <= set(shown) and set(shown) <= words


async def test_a_tiny_terminal_draws_what_fits_without_crashing(monkeypatch):
    app = five_host_app(monkeypatch)
    async with app.run_test(size=(25, 8)) as pilot:  # 24 cells beside the scrollbar
        await feed_five(app, pilot, steps=2)
        assert app.table.column_layout.fitted == 1  # the name, the badge, Oper and the header's →
        assert app.table.screen_text(0).rstrip().endswith("Oper→")
        assert app.table.screen_text(1).startswith("▾ nas01")
        await pilot.press("right", "right", "down")
        await pilot.resize_terminal(50, 12)
        await wait_for(lambda: app.table.column_layout.fitted > 1, 5.0, message="refitted")
        assert "lagg0" in "".join(screen_lines(app))
        await pilot.resize_terminal(10, 6)  # narrower than the name: cut, not crashed
        await wait_for(lambda: app.table.size.width <= 10, 5.0, message="shrunk")
        assert screen_lines(app)[1].startswith("▾ nas")


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 60)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_footer_shows_the_keys_that_matter_most_whole_and_as_many_as_fit(monkeypatch, size):
    from textual.widgets._footer import FooterKey

    from linkdeck.ui.bindings import FOOTER_ORDER

    app = five_host_app(monkeypatch)
    async with app.run_test(size=size) as pilot:
        await feed_five(app, pilot, steps=2)
        await pilot.pause()
        keys = list(app.screen.query(FooterKey))
        ids = [app.screen.active_bindings[k.key].binding.id for k in keys]
        # the most important first, in order, with nothing of lesser rank in a greater one's place
        assert ids == list(FOOTER_ORDER[: len(ids)])
        # each whole on screen, and the next one would not have fitted
        assert all(
            k.region.right <= size[0] and k.region.width == len(k.key_display) + len(k.description) + 3 for k in keys
        )
        used = sum(k.region.width for k in keys)
        if len(ids) < len(FOOTER_ORDER):
            nxt = next(b for b in app.BINDINGS if b.id == FOOTER_ORDER[len(ids)])
            assert used + len(app.get_key_display(nxt)) + len(nxt.description) + 3 > size[0]
        # the keys a slow transfer needs are there from 80 columns on
        assert {"flows", "test", "diagnose"} <= set(ids)
        if size[0] >= 200:
            assert ids == list(FOOTER_ORDER)


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 60)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_table_graphs_show_traffic_and_say_their_scale(size):
    from linkdeck.ui.widgets.sparkline import BARS
    from tests.synthetic import SyntheticAdapter, physical

    adapter = SyntheticAdapter([physical("eth0", 1000)], rate_bps={"eth0": 96e6})  # a 96 Mb/s flow on a 1 Gb/s link
    app = LinkdeckApp(
        Settings(interval=0.2, local=False), [HostSpec("a", address="a.invalid")], opener=opener_for({"a": adapter})
    )
    async with app.run_test(size=size) as pilot:
        await wait_for(lambda: adapter.ticks >= 6, 10.0, message="a few samples")
        await pilot.pause()
        graph = 1 + next(i for i, p in enumerate(app.table.column_layout.placed) if p.column.id == "graphs")
        row = next(r for r in app.table.rows if not r.is_host)

        def bars() -> str:
            return app.table._row_cells(row)[graph][0][0].strip()

        assert bars() and max(BARS.index(c) for c in bars()) >= 7  # the flow fills the graph
        assert "RX 60s (peak)" in app.table._header(Style())[1].text
        await pilot.press("a")
        await pilot.pause()
        assert max(BARS.index(c) for c in bars()) == 1  # a tenth of the link: the baseline
        assert "RX 60s (link)" in app.table._header(Style())[1].text


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 60)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_filter_matches_hosts_too_hides_hosts_without_a_match_and_says_how_many(monkeypatch, size):
    app = five_host_app(monkeypatch)
    async with app.run_test(size=size) as pilot:
        await feed_five(app, pilot, steps=2)

        async def filtered(text: str) -> tuple[list[str], str]:
            await pilot.press("escape", "slash", *text, "enter")
            await pilot.pause()
            return shown(app), str(app.query_one("#status").render())

        rows, status = await filtered("web1")  # a host's name: all its interfaces
        assert rows[0] == "web1" and sorted(rows[1:]) == ["docker0", "enp3s0f0", "enp3s0f1", "lo"]
        assert "filter 'web1': 4 interfaces on 1 host" in status
        rows, status = await filtered("igb")  # an interface's name: only hosts that have one
        assert rows == ["nas01", "lagg0", "igb0", "igb1"]
        assert "filter 'igb': 3 interfaces on 1 host" in status  # lagg0 kept for context
        rows, status = await filtered("mce0")
        assert rows == [] and "filter 'mce0': no match" in status


def test_the_fold_rule_reads_the_same_in_the_fold_row_the_help_and_the_doc():
    """Which members a fold holds is one rule (idle.BUSY_BPS, IDLE_S): the fold row's note,
    ``v``'s help and DASHBOARD.md's ``v`` row each name its rate, not just "traffic"."""
    from pathlib import Path

    from linkdeck.ui.bindings import APP_KEYS
    from linkdeck.ui.state.idle import BUSY_BPS, IDLE_S
    from linkdeck.ui.state.rows import FOLD_NOTE

    rate = f"{BUSY_BPS / 1000:.0f} kb/s"
    assert f"under {rate}" in FOLD_NOTE and f"for {IDLE_S:.0f} s" in FOLD_NOTE
    (v,) = [k for k in APP_KEYS if k.key == "v"]
    assert f"{rate} or more" in v.help
    doc = (Path(__file__).resolve().parents[2] / "docs" / "DASHBOARD.md").read_text()
    row = next(line for line in doc.splitlines() if line.startswith("| `v` |"))
    assert f"under {rate}" in row and f"carries {rate} or more" in row and FOLD_NOTE.split(" · ")[0] in row


async def test_a_new_status_line_is_drawn_without_laying_out_the_screen(monkeypatch):
    """The header's counts and linkdeck's own CPU change every few seconds; its line is one
    row high whatever it says, so a new one is drawn in place: a layout of the whole screen
    would redraw the table's scrollbar and recompute every widget's size each time."""
    app = five_host_app(monkeypatch)
    async with app.run_test(size=(80, 12)) as pilot:  # rows taller than the screen: a scrollbar
        await feed_five(app, pilot, steps=5)
        assert app.table.show_vertical_scrollbar
        screen = app.screen
        layouts = []
        real = screen._refresh_layout
        monkeypatch.setattr(screen, "_refresh_layout", lambda *a, **k: (layouts.append(1), real(*a, **k))[1])
        status = app.query_one("#status")
        for cpu in (1.5, 7.25, 12.0):
            app.own = (cpu, 80.0)
            app._show_status()
            await wait_for(lambda: f"{cpu:.1f}% CPU" in str(status.render()), 5.0, message="the new status drawn")
            await pilot.pause()
        assert layouts == []


async def test_a_changed_row_repaints_its_cells_and_not_the_scrollbar_beside_it(monkeypatch):
    """The table repaints the lines that changed, as wide as its columns: the scrollbar's cell
    at the end of each line is no part of them, and is not drawn again with every row."""
    app = five_host_app(monkeypatch)
    async with app.run_test(size=(80, 12)) as pilot:
        await feed_five(app, pilot, steps=5)
        table = app.table
        assert table.show_vertical_scrollbar and table.view_width < table.size.width
        regions = []
        real = table.refresh
        monkeypatch.setattr(table, "refresh", lambda *r, **k: (regions.extend(r), real(*r, **k))[1])
        await feed_five(app, pilot, steps=8)
        assert regions, "changed rows were repainted"
        assert [r for r in regions if r.right > table.view_width] == []
