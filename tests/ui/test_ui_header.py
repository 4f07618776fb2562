"""The table's header at the sizes people run it in (80x24, 200x60): sideways scrolling draws
whole columns only and says where the others are (← →), a sorted column keeps its whole name,
and the help names each column as the header does (issue 23)."""

from __future__ import annotations

import pytest
from rich.console import Console

from linkdeck.core.cells import SORTS
from linkdeck.ui.app import LinkdeckApp
from linkdeck.ui.screens.help_screen import HelpScreen
from linkdeck.ui.widgets.columns import Placed, fit, header_title
from tests.lab import wait_for
from tests.ui.test_ui_snapshot import feed_five, five_host_app

SIZES = [(80, 24), (200, 60)]
SIZE_IDS = ["80x24", "200x60"]


def lines(app: LinkdeckApp) -> list[str]:
    return [app.table.screen_text(y) for y in range(app.table.size.height)]


def assert_whole_columns(app: LinkdeckApp) -> tuple[bool, bool]:
    """Every column on screen is whole, header and cells; a column cut by either edge leaves
    blank cells, never a fragment. Returns (← shown, → shown)."""
    table = app.table
    layout = table.column_layout
    x = int(table.scroll_offset.x)
    rest = table.view_width - layout.frozen_w
    screen = lines(app)
    rows = [line for line, row in zip(screen[1:], table.rows[int(table.scroll_offset.y) :]) if not row.is_host]
    header = screen[0]
    left = header[layout.frozen_w - 2] == "←"
    right = header.rstrip().endswith("→")
    for p in layout.placed:
        lo, hi = p.x - x, p.x + p.width - x  # its cells, relative to the scrolling part
        whole = lo >= 0 and hi <= rest - (1 if right else 0)
        title = header_title(p, app.view.in_bytes, app.history.span, app.view.graph_scale)
        cells = header[layout.frozen_w + max(lo, 0) : layout.frozen_w + min(hi, rest)]
        if whole:
            assert cells.strip(" ▼") == title.strip() or " ".join(cells.split()) == " ".join(title.split()), (
                p.column.id,
                cells,
                header,
            )
        elif hi > 0 and lo < rest:
            assert cells.strip(" →") == "", (p.column.id, cells, header)
            for line in rows:
                assert line[layout.frozen_w + max(lo, 0) : layout.frozen_w + min(hi, rest)].strip() == "", (
                    p.column.id,
                    line,
                )
    return left, right


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
async def test_sideways_scroll_draws_whole_columns_and_says_where_the_rest_are(monkeypatch, size):
    app = five_host_app(monkeypatch)
    async with app.run_test(size=size) as pilot:
        await feed_five(app, pilot, steps=3)
        table = app.table
        layout = table.column_layout
        last = layout.placed[-1]
        assert assert_whole_columns(app) == (False, layout.fitted < len(layout.placed))
        if layout.fitted == len(layout.placed):
            # everything fits (200 columns): nothing to scroll to, nothing promised
            await pilot.press("right")
            await pilot.pause()
            assert table.scroll_offset.x == 0 and "→" not in lines(app)[0] and "←" not in lines(app)[0]
            return
        # 80 columns: → after Util; each → step shows whole columns, ← once some are off the left
        assert lines(app)[0].rstrip().endswith("Util→")
        seen = set()
        for _ in range(len(layout.placed)):
            await pilot.press("right")
            await pilot.pause()
            left, right = assert_whole_columns(app)
            assert left
            seen.add(right)
        # the last column is reached whole, and then nothing more is promised to the right
        assert (
            seen == {True, False} and header_title(last, False, app.history.span, app.view.graph_scale) in lines(app)[0]
        )
        assert not lines(app)[0].rstrip().endswith("→")
        # the wheel or the scrollbar can stop anywhere: mid-Speed/dup, the old "up" over empty cells
        speed = next(p for p in layout.placed if p.column.id == "speed")
        table.scroll_to(x=speed.x + speed.width - 2, animate=False)
        await pilot.pause()
        assert int(table.scroll_offset.x) == speed.x + speed.width - 2
        assert assert_whole_columns(app) == (True, True)
        assert "up " not in lines(app)[0][layout.frozen_w : layout.frozen_w + 4]
        table.scroll_to(x=0, animate=False)
        await pilot.pause()
        assert assert_whole_columns(app) == (False, True)
        # the findings pane takes lines, the table gets its scrollbar: the → stays beside it, not under it
        await pilot.press("f")
        await wait_for(
            lambda: table.show_vertical_scrollbar and table.column_layout is not layout,
            5.0,
            message="refitted beside the scrollbar",
        )
        await pilot.pause()
        header = lines(app)[0]
        assert table.scrollable_content_region.width == size[0] - 1 and len(header) == size[0] - 1
        assert header.rstrip().endswith("→") and assert_whole_columns(app) == (False, True)


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
async def test_a_sorted_header_keeps_its_whole_name(monkeypatch, size):
    app = five_host_app(monkeypatch)
    async with app.run_test(size=size) as pilot:
        await feed_five(app, pilot, steps=2)
        layout = app.table.column_layout
        for _ in SORTS:
            header = lines(app)[0]
            sort = app.view.sort
            assert "…" not in header, header
            if sort == "name":
                assert header.startswith("Interface▲"), header
            for p in layout.placed[: layout.fitted]:
                title = header_title(p, False, app.history.span, app.view.graph_scale)
                if p.column.sort is not None and p.column.sort.id == sort:
                    assert f"▼{title}" in header, (sort, header)  # "▼Util", "▼Drp/s"
                else:
                    assert title in header and f"▼{title}" not in header, (sort, header)
            assert header.count("▼") + header.count("▲") == sum(
                1 for p in layout.placed[: layout.fitted] if p.column.sort and p.column.sort.id == sort
            ) + (sort == "name")
            await pilot.press("s")
            await pilot.pause()
        assert app.view.sort == "name"  # the cycle went round every sort


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
async def test_the_help_names_each_column_as_the_header_does(monkeypatch, size):
    app = five_host_app(monkeypatch)
    async with app.run_test(size=size) as pilot:
        await feed_five(app, pilot, steps=2)
        layout = app.table.column_layout
        drawn = [
            " ".join(header_title(p, False, app.history.span, app.view.graph_scale).split())
            for p in layout.placed[: layout.fitted]
        ]
        header = " ".join(lines(app)[0].split())
        assert all(name in header for name in drawn)
        shown = [" ".join(header_title(p, False, app.history.span).split()) for p in layout.placed[: layout.fitted]]
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        console = Console(width=size[0] - 4, color_system=None)
        with console.capture() as capture:
            console.print(app.screen.query_one("#help-body").content)
        help_names = [line.split("  ")[0].strip() for line in capture.get().split("Columns", 1)[1].splitlines()]
    named = {n.strip() for entry in help_names for n in entry.split(" · ") if n.strip()}
    for name in shown:  # "Drp/s" at 80 columns, "Drop/s" at 200, "RX 60s TX 60s" for the graphs
        assert name in named, (name, sorted(named))


def test_a_narrow_rate_header_says_bits_unless_bytes_are_shown():
    # the narrow RX header said B/s while the cells were in bits
    rx = next(
        p for p in fit(50, ("rx", "tx", "errors", "drops", "util", "oper", "speed")).placed if p.column.id == "rx"
    )
    assert rx.short
    assert header_title(rx, False, "60s") == "RX b/s" and header_title(rx, True, "60s") == "RX B/s"
    wide = Placed(rx.column, rx.column.widths[0], False, 1)
    assert header_title(wide, False, "60s") == "RX" and header_title(wide, True, "60s") == "RX B/s"
