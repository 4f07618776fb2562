"""The host screen and the interface screen (issue 23): addresses in the host's interface table
in the dashboard's order, wrapped facts under their value, the driver line, a configured speed
said as configured, the last test on both of its ends, and packet counts that segmentation
offload makes a fraction of the wire's explained where ethtool -k and the counters show it.
Driven headless at 80x24 and 200x60 (the host screen of many links at 120x40 too) with constructed
updates (the numbers must be exact)."""

from __future__ import annotations

import pytest

from linkdeck.core.model import Counters, EndState, HostState, HostUpdate, InterfaceView, Rates
from linkdeck.probe import Outcome
from linkdeck.settings.config import HostSpec, Settings
from linkdeck.ui.app import LinkdeckApp
from linkdeck.ui.messages import HostUpdated
from linkdeck.ui.screens.interface_screen import DetailScreen, burst_notes
from linkdeck.verdict.rules import judge
from tests.builders import clean_gigabit, iface
from tests.lab import until
from tests.synthetic import SyntheticAdapter, opener_for, physical
from tests.ui.test_ui_app import mounted

SIZES = [(80, 24), (200, 60)]
LONG_OS = "Debian GNU/Linux 12 (bookworm) (kernel 6.1.0-27-amd64) on a rack server with a long model name"
V6 = "2001:db8:77:1::21/64"


def lines_of(widget) -> list[str]:
    """The widget's lines as drawn on screen (its whole height, scrolled or not)."""
    return [widget.render_line(y).text.rstrip() for y in range(widget.size.height)]


def said(widget) -> str:
    """The widget's words as drawn, spaces squeezed."""
    return " ".join(" ".join(line.split()) for line in lines_of(widget))


def view(name: str, rx: float, **kw) -> InterfaceView:
    return InterfaceView(
        iface(name, **kw),
        Rates(rx, rx / 2, rx / 8000, rx / 16000, 0.0, 0.0, 0.0, 0.0),
        Counters(70, 7, 1, 1, 0, 0, 0, 0),
    )


def h1(*views: InterfaceView, os_detail: str = "Debian 12") -> HostUpdate:
    return HostUpdate(host="h1", os="linux", os_detail=os_detail, state=HostState.LIVE, time=1.0, interfaces=views)


def app_of(*hosts: str, settings: Settings | None = None) -> LinkdeckApp:
    return LinkdeckApp(
        settings or Settings(), [HostSpec(h, address=f"{h}.invalid") for h in hosts], opener=opener_for({})
    )


async def open_host(app: LinkdeckApp, pilot, host: str):
    app.table.select_key(("host", host))
    await pilot.press("i")
    return await until(lambda: type(app.screen).__name__ == "HostScreen" and app.screen, "the host screen")


async def open_detail(app: LinkdeckApp, pilot, host: str, name: str) -> DetailScreen:
    await until(lambda: any(r.key == ("iface", host, name) for r in app.table.rows), f"the row {name}")
    app.table.select_key(("iface", host, name))
    await pilot.press("enter")
    screen = await until(lambda: isinstance(app.screen, DetailScreen) and app.screen, "the detail screen")
    await until(lambda: (w := mounted(screen, "#detail-facts")) and w.sections, "the facts")
    await pilot.pause()
    return screen


@pytest.mark.parametrize("size", SIZES)
async def test_host_screen_lists_addresses_in_the_dashboards_order(size):
    app = app_of("h1")
    update = h1(
        view("eth10", 1e6, addresses=("10.1.0.5/24", V6)),
        view("eth2", 9e6, addresses=("10.2.0.5/24",)),
        view("eth1", 5e6),
        os_detail=LONG_OS,
    )
    async with app.run_test(size=size) as pilot:
        app.post_message(HostUpdated(update))
        await until(lambda: len(app.table.rows) == 4, "the rows")
        await pilot.press("s")  # sort by RX: the busiest first
        assert app.view.sort == "rx"
        await pilot.pause()
        dashboard = [r.view.iface.name for r in app.table.rows if r.view]
        assert dashboard == ["eth2", "eth1", "eth10"]
        screen = await open_host(app, pilot, "h1")
        await pilot.pause()
        table = lines_of(screen.query_one("#host-interfaces"))
        rows = [line.split()[0] for line in table if line.split() and line.split()[0].startswith("eth")]
        assert rows == dashboard  # the host screen lists them as the table does
        eth10 = next(n for n, line in enumerate(table) if line.lstrip().startswith("eth10"))
        if size[0] >= 120:  # beside the numbers, one address a line, in the ADDRESSES column
            header = next(line for line in table if "IFACE" in line)
            column = header.index("ADDRESSES")
            assert table[eth10][column:] == "10.1.0.5/24" and table[eth10 + 1][column:] == V6
            assert table[eth10 + 1][:column].strip() == ""
            eth1 = next(line for line in table if line.lstrip().startswith("eth1 "))
            assert eth1[column:] == "—"
        else:  # under the row, from the second column on: the numbers keep their room
            assert "ADDRESSES" not in "".join(table)
            assert table[eth10 + 1] == " " * table[eth10].index("phys") + f"10.1.0.5/24, {V6}"
            assert "8.00 Mb/s" not in table[eth10] or table[eth10].rstrip().endswith("Mb/s")
        # a fact too long for the screen continues under its value, not under its label
        facts = lines_of(screen.query_one("#host-facts"))
        os_line = next(n for n, line in enumerate(facts) if line.lstrip().startswith("OS"))
        value_at = facts[os_line].index("linux")
        if size[0] < len(LONG_OS) + 20:
            assert facts[os_line + 1][:value_at].strip() == "" and facts[os_line + 1][value_at : value_at + 1].strip()
            assert not facts[os_line + 1].lstrip().startswith(("State", "OS"))
        assert "long model name" in " ".join(facts)


@pytest.mark.parametrize("size", SIZES)
async def test_detail_says_driver_offload_and_bytes_as_counted(size):
    app = app_of("h1")
    eth0 = view(
        "eth0",
        8e6,
        driver="e1000e",
        driver_version="6.1.0-27-amd64",
        firmware_version="0.13-4",
        offload=("tcp-segmentation-offload",),
        mtu=1500,
    )
    veth = view("veth1", 8e6, kind="virtual", speed_mbps=None, duplex=None)
    async with app.run_test(size=size) as pilot:
        app.post_message(HostUpdated(h1(eth0, veth)))
        screen = await open_detail(app, pilot, "h1", "eth0")
        facts = said(screen.query_one("#detail-facts"))
        assert "Driver e1000e, version 6.1.0-27-amd64, firmware 0.13-4" in facts
        assert "Offload TSO on, GSO off, GRO off" in facts
        traffic = said(screen.query_one("#detail-traffic"))
        assert "Bytes rx / tx 70 B / 7 B" in traffic  # was "70.0 B / 7.00 B"
        # 1000-byte packets: no burst to explain, whatever the offload
        assert "Packet counts" not in traffic
        await pilot.press("escape")
        screen = await open_detail(app, pilot, "h1", "veth1")
        facts = said(screen.query_one("#detail-facts"))
        assert "Driver unknown" in facts and "Offload" not in facts  # ethtool -k not read: nothing said


async def test_a_configured_speed_is_marked_as_configured():
    # through the real collector: [speed] puts 1G on an interface that reports none
    adapter = SyntheticAdapter(
        [physical("eth0", None, kind="physical"), physical("eth1", 10000)], rate_bps={"eth0": 8e6, "eth1": 8e6}
    )
    settings = Settings(interval=0.2, speed_overrides={"syn/eth0": 1000, "syn/eth1": 2500})
    app = LinkdeckApp(settings, [HostSpec("syn", address="syn.invalid")], opener=opener_for({"syn": adapter}))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_detail(app, pilot, "syn", "eth0")
        facts = screen.query_one("#detail-facts")
        text = said(facts)
        assert "Speed / duplex 1G full (configured in [speed], not negotiated; the host reports no speed)" in text
        # wrapped at 80 columns, the value's lines start under the value
        lines = lines_of(facts)
        first = next(n for n, line in enumerate(lines) if "Speed / duplex" in line)
        at = lines[first].index("1G full")
        assert lines[first + 1][:at].strip() == "" and lines[first + 1][at:].strip()
        await pilot.press("escape")
        screen = await open_detail(app, pilot, "syn", "eth1")
        text = said(screen.query_one("#detail-facts"))
        assert "2.5G full (configured in [speed], not negotiated; the host reports 10G)" in text


def outcome(src_iface: str = "eth0", dst_iface: str = "eth1") -> Outcome:
    result = clean_gigabit(src="lab-a", dst="lab-b")
    ends = EndState(host="lab-a", iface=iface(src_iface)), EndState(host="lab-b", iface=iface(dst_iface))
    return Outcome(result, *ends, judge(result, *ends), src_iface=src_iface, dst_iface=dst_iface)


@pytest.mark.parametrize("size", SIZES)
async def test_last_test_shows_on_both_ends_and_says_which_end(size):
    app = app_of("lab-a", "lab-b", settings=Settings(ui_columns=("oper", "speed", "mtu", "rx", "tx", "test")))
    o = outcome()
    async with app.run_test(size=size) as pilot:
        app.tests.last[("lab-a", "eth0")] = app.tests.last[("lab-b", "eth1")] = o  # as run_pair leaves them
        app.post_message(
            HostUpdated(HostUpdate("lab-a", "linux", HostState.LIVE, time=1.0, interfaces=(view("eth0", 1e6),)))
        )
        app.post_message(
            HostUpdated(HostUpdate("lab-b", "linux", HostState.LIVE, time=1.0, interfaces=(view("eth1", 1e6),)))
        )
        await until(lambda: len(app.table.rows) == 4, "the rows")
        await pilot.pause()
        short = f"OK {o.verdict.pct_of_expected:.0f}%"
        assert app.inline_verdict("lab-a", "eth0") == f"→ {short}"
        assert app.inline_verdict("lab-b", "eth1") == f"← {short}"
        rows = {r.key: i for i, r in enumerate(app.table.rows)}
        assert app.table.row_text(rows[("iface", "lab-a", "eth0")]).rstrip().endswith(f"→ {short}")
        assert app.table.row_text(rows[("iface", "lab-b", "eth1")]).rstrip().endswith(f"← {short}")
        screen = await open_detail(app, pilot, "lab-b", "eth1")
        facts = said(screen.query_one("#detail-facts"))
        assert (
            "Last test (to here from lab-a)" in facts
            and "Verdict OK: " in facts
            and "Test lab-a → lab-b 10.0.0.2" in facts
        )
        await pilot.press("escape")
        screen = await open_detail(app, pilot, "lab-a", "eth0")
        facts = said(screen.query_one("#detail-facts"))
        assert "Last test (from here to lab-b)" in facts and "Verdict OK: " in facts
        # the help says what the cell says
        from linkdeck.core.cells import COLUMNS

        assert "on both ends" in COLUMNS["test"].help and "from this interface" not in COLUMNS["test"].help


def burst_view(
    tx_bps: float,
    tx_pps: float,
    rx_bps: float = 0.0,
    rx_pps: float = 0.0,
    offload=("tcp-segmentation-offload", "generic-segmentation-offload"),
):
    return InterfaceView(
        iface("veth0", kind="virtual", offload=offload), Rates(rx_bps, tx_bps, rx_pps, tx_pps), Counters()
    )


def test_burst_notes_need_both_the_offload_and_the_counters():
    # iperf3 through a veth with TSO on (figures shaped like the lab's): 940 Mb/s in 2.7 k
    # counted packets a second is 43.5 kB a packet, 29 frames of 1514 bytes
    (note,) = burst_notes(burst_view(940e6, 2700))
    assert note[0] == "TX packets"
    assert note[1].startswith("43.5 kB each on average, larger than a 1514-byte frame: TSO and GSO on (ethtool -k)")
    assert "about 29× as many packets" in note[1]
    assert burst_notes(burst_view(940e6, 78_000)) == []  # MTU-sized packets: nothing to explain
    assert burst_notes(burst_view(940e6, 2700, offload=())) == []  # offload off: another cause
    assert burst_notes(burst_view(940e6, 2700, offload=None)) == []  # offload not read: not guessed
    assert burst_notes(burst_view(0.0, 0.0)) == []
    # GRO merges on the way in: the receive side's note, only with GRO on
    (rx,) = burst_notes(burst_view(0.0, 0.0, 940e6, 2700, offload=("generic-receive-offload",)))
    assert rx[0] == "RX packets" and "GRO on" in rx[1] and "merges arriving frames" in rx[1]


@pytest.mark.parametrize("size", SIZES)
async def test_detail_explains_a_sender_counting_bursts(size):
    app = app_of("h1")
    sender = InterfaceView(
        iface(
            "veth0",
            kind="virtual",
            speed_mbps=None,
            duplex=None,
            offload=("tcp-segmentation-offload", "generic-segmentation-offload"),
        ),
        Rates(1.2e6, 940e6, 1900.0, 2700.0, 0.0, 0.0, 0.0, 0.0),
        Counters(),
    )
    async with app.run_test(size=size) as pilot:
        app.post_message(HostUpdated(h1(sender)))
        screen = await open_detail(app, pilot, "h1", "veth0")
        lines = lines_of(screen.query_one("#detail-traffic"))
        text = said(screen.query_one("#detail-traffic"))
        assert "Packet counts TX packets 43.5 kB each on average" in text
        assert "RX packets" not in text  # 79-byte ACKs: nothing merged to explain
        # the explanation wraps under itself, not under its label
        first = next(n for n, line in enumerate(lines) if "TX packets" in line)
        at = lines[first].index("43.5 kB")
        assert lines[first + 1][:at].strip() == "" and lines[first + 1][at:].strip()


@pytest.mark.parametrize("size", SIZES)
async def test_the_speed_cell_marks_a_configured_speed_and_the_help_says_what_it_means(size):
    # through the real collector: [speed] on two interfaces, a third left as it negotiated
    adapter = SyntheticAdapter(
        [physical("eth0", None), physical("eth1", 10000), physical("eth2", 100)],
        rate_bps={"eth0": 8e6, "eth1": 8e6, "eth2": 8e6},
    )
    settings = Settings(interval=0.2, speed_overrides={"syn/eth0": 100, "syn/eth1": 2500})
    app = LinkdeckApp(settings, [HostSpec("syn", address="syn.invalid")], opener=opener_for({"syn": adapter}))
    async with app.run_test(size=size) as pilot:
        await until(lambda: len(app.table.rows) == 4, "the rows")
        await pilot.pause()
        rows = {r.view.iface.name: app.table.row_text(i) for i, r in enumerate(app.table.rows) if r.view}
        short = next(p.short for p in app.table.column_layout.placed if p.column.id == "speed")
        assert ("100M*F" if short else "100M* F") in rows["eth0"]
        assert ("2.5G*F" if short else "2.5G* F") in rows["eth1"]
        assert ("100M F" if short else "100M full") in rows["eth2"] and "*" not in rows["eth2"]
        # the host screen's table says it the same way
        screen = await open_host(app, pilot, "syn")
        await pilot.pause()
        table = said(screen.query_one("#host-interfaces"))
        assert "eth0 physical up 100M* full" in table and "eth2 physical up 100M full" in table
        await pilot.press("escape")
        await pilot.press("question_mark")
        helped = await until(lambda: type(app.screen).__name__ == "HelpScreen" and app.screen, "the help")
        await pilot.pause()
        words = said(helped.query_one("#help-body"))
        assert "10G* a speed set in the config's [speed], not negotiated" in words
        assert "* after the speed: set in the config's [speed], not negotiated" in words


T0 = 1_790_000_000.0  # the app's clock here (a fixed wall-clock time)


@pytest.mark.parametrize("size", SIZES)
async def test_host_and_interface_screens_say_when_each_finding_was_raised(size):
    import datetime as dt

    app = app_of("h1")
    now = [T0]
    app.clock = lambda: now[0]
    async with app.run_test(size=size) as pilot:
        app.post_message(
            HostUpdated(h1(view("eth0", 1e6, duplex="half"), view("eth1", 1e6)))
        )  # HALF_DUPLEX, from facts alone
        await until(lambda: app.updates["h1"].interfaces, "the update")
        app.passes.now_due()  # judged now, not on the 2 s cadence
        app._rebuild()
        assert [f.code for f in app.findings] == ["HALF_DUPLEX"]
        now[0] = T0 + 200
        # as the findings pane says it
        raised = f"raised {dt.datetime.fromtimestamp(T0).strftime('%H:%M:%S')}, up 3 min 20 s"
        screen = await open_host(app, pilot, "h1")
        await pilot.pause()
        assert raised in said(screen.query_one("#host-findings"))
        await pilot.press("escape")
        screen = await open_detail(app, pilot, "h1", "eth0")
        assert raised in said(screen.query_one("#detail-findings"))


def test_the_host_screen_writes_a_stale_host_dim_not_in_lives_green() -> None:
    """The legend: green is a live host, a stale one is dim. The host screen wrote "stale"
    in the live state's green (constructed update, its frames stopped)."""
    from dataclasses import replace

    from linkdeck.core.freshness import as_seen
    from linkdeck.ui.screens.host_screen import host_facts
    from linkdeck.ui.widgets.marks import DIM, STATE_STYLE

    live = replace(h1(view("eth0", 1e6)), received=1.0, fresh_until=3.0)
    facts = host_facts("h1", as_seen(live, 11.0)).text
    start = facts.plain.index("stale")
    styles = {str(s.style) for s in facts.spans if s.start <= start < s.end}
    assert str(DIM) in styles and str(STATE_STYLE[HostState.LIVE]) not in styles
    facts = host_facts("h1", as_seen(live, 2.0)).text
    start = facts.plain.index("live")
    assert str(STATE_STYLE[HostState.LIVE]) in {str(s.style) for s in facts.spans if s.start <= start < s.end}


def test_the_host_screen_says_what_the_host_could_not_give_once() -> None:
    """A busybox host without ethtool and ss, and an `ip -j addr` it printed unreadably
    (constructed update): one Missing line says each, a name's ESC made visible."""
    from dataclasses import replace

    from linkdeck.core.model import HostDetail
    from linkdeck.ui.screens.host_screen import host_facts

    missing = (
        "no ethtool: no driver, rings, offloads or NIC counters (speed and duplex from sysfs)",
        "no ss: no per-flow view (w)",
        "facts of 1 link unavailable: ip -j addr: \x1b[31mRED: 'mtu' is not a non-negative integer: 'big'",
    )
    update = replace(h1(view("eth0", 1e6)), detail=HostDetail(missing=missing))
    plain = host_facts("h1", update).text.plain
    (line,) = [ln for ln in plain.splitlines() if ln.startswith("Missing")]
    assert "no ethtool: no driver" in line and "no ss: no per-flow view (w)" in line
    assert "\\x1b[31mRED" in line and "\x1b" not in plain
    assert plain.count("no ethtool") == 1
    assert "Missing" not in host_facts("h1", h1(view("eth0", 1e6))).text.plain


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 60)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_host_screen_of_a_node_of_many_links_shows_its_findings_without_a_scroll(size):
    # 60 links (constructed), one at half duplex: the interface table is taller than any of the terminals
    views = [view(f"veth{i}", 0.0) for i in range(59)]
    app = app_of("h1")
    async with app.run_test(size=size) as pilot:
        app.post_message(HostUpdated(h1(view("eth0", 1e6, duplex="half"), *views)))
        await until(lambda: app.updates["h1"].interfaces, "the update")
        app.passes.now_due()
        app._rebuild()
        assert [f.code for f in app.findings] == ["HALF_DUPLEX"]
        screen = await open_host(app, pilot, "h1")
        await pilot.pause()
        findings, interfaces = screen.query_one("#host-findings"), screen.query_one("#host-interfaces")
        assert findings.region.y < interfaces.region.y
        assert interfaces.region.bottom > size[1]  # the table runs off the screen, the findings do not
        assert "HALF_DUPLEX" in said(findings) and findings.region.bottom <= size[1] - 1
