"""`s` on a test's result, a diagnosis and the flows screen saves what the screen shows as
Markdown beside the recordings (``[ui] save_dir``), and shows the whole path on that screen.

The test result is a real iperf3 capture judged against constructed ends
(test_result_panels_ui's outcome), which is also the diagnosis's test between two constructed
hosts; the flows screen shows a constructed host's message."""

from __future__ import annotations

import pytest
from textual.widgets import Static

from linkdeck.settings.config import Settings
from linkdeck.ui.app import LinkdeckApp
from linkdeck.ui.screens.probe_screens import TestScreen
from tests.lab import wait_for
from tests.ui.test_result_panels_ui import SIZES, degraded_outcome


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_s_saves_a_test_result_as_shown_and_says_the_whole_path(monkeypatch, tmp_path, size) -> None:
    outcome = degraded_outcome()

    async def run_pair(*args, **kwargs):
        return outcome

    app = LinkdeckApp(Settings(save_dir=str(tmp_path / "a-long-directory-name-for-saved-results" / "linkdeck")), [])
    monkeypatch.setattr(app.tests, "run_pair", run_pair)
    async with app.run_test(size=size) as pilot:
        screen = TestScreen("web1", "nas01", "10.0.10.2", "eth0")
        app.push_screen(screen)
        await wait_for(lambda: screen.outcome is not None, 10.0, message="the result")
        await pilot.pause()
        await pilot.press("s")
        await pilot.pause()
        (path,) = (tmp_path / "a-long-directory-name-for-saved-results" / "linkdeck").glob("linkdeck-test-*.md")
        said = str(screen.query_one("#saved", Static).render())
        # the path whole, on the screen that saved it (a toast broke it mid-name)
        assert said.replace("\n", "") == f"saved {path}"
        text = path.read_text()
        assert text.startswith("# linkdeck test web1 → nas01\n")
        shown = str(screen.query_one("#probe-result").render())
        for line in (line.strip() for line in shown.splitlines()[:6] if line.strip()):
            assert line.split()[0] in text  # the panel's words, as shown
        assert "sender 79%, receiver 47%" in text


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_s_saves_the_flows_screen_as_shown(tmp_path, size) -> None:
    from linkdeck.ui.screens.flows_screen import FlowsScreen
    from tests.synthetic import SyntheticAdapter, opener_for, physical
    from tests.ui.test_ui_app import FAST, HostSpec

    adapter = SyntheticAdapter([physical("eth0")])  # a host with no per-flow view: its reason is what shows
    from dataclasses import replace

    app = LinkdeckApp(
        replace(FAST, save_dir=str(tmp_path)),
        [HostSpec("syn", address="syn.invalid")],
        opener=opener_for({"syn": adapter}),
    )
    async with app.run_test(size=size) as pilot:
        screen = FlowsScreen("syn", None, 0.5)
        await app.push_screen(screen)
        body = screen.query_one("#flows-body", Static)
        await wait_for(
            lambda: "reading its TCP flows" not in str(body.render()), 10.0, message="the flows screen's answer"
        )
        await pilot.press("s")
        await pilot.pause()
        (path,) = tmp_path.glob("linkdeck-flows-*.md")
        assert str(body.render()).splitlines()[0].strip() in path.read_text()
        assert str(screen.query_one("#saved", Static).render()).replace("\n", "") == f"saved {path}"


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_s_saves_a_diagnosis_as_shown_and_says_the_whole_path(tmp_path, size) -> None:
    from dataclasses import replace

    from linkdeck.ui.screens.diagnose_screen import DiagnoseScreen
    from tests.synthetic import SyntheticAdapter, opener_for, physical
    from tests.ui.test_ui_app import FAST, HostSpec

    save_dir = tmp_path / "a-long-directory-name-for-saved-results" / "linkdeck"
    adapters = {name: SyntheticAdapter([physical("eth0")], rate_bps={"eth0": 8e6}) for name in ("a", "b")}
    app = LinkdeckApp(
        replace(FAST, save_dir=str(save_dir)),
        [HostSpec("a", address="a.invalid"), HostSpec("b", address="b.invalid")],
        opener=opener_for(adapters),
    )

    async def run_pair(*args, **kwargs):
        return degraded_outcome()

    app.tests.run_pair = run_pair
    async with app.run_test(size=size) as pilot:
        await wait_for(lambda: all(app.updates[h].interfaces for h in ("a", "b")), 10.0, message="both hosts live")
        screen = DiagnoseScreen("a", "b")
        await app.push_screen(screen)
        await wait_for(lambda: screen.judged is not None, 30.0, message="the verdict")
        await pilot.pause()
        await pilot.press("s")
        await pilot.pause()
        (path,) = save_dir.glob("linkdeck-diagnose-*.md")
        assert str(screen.query_one("#saved", Static).render()).replace("\n", "") == f"saved {path}"
        text = path.read_text()
        assert text.startswith("# linkdeck diagnose a → b\n")
        assert "Verdict: BAD — a bottleneck near 4.58 Gb/s" in text and "next: find the slow hop" in text


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_a_diagnosis_page_wraps_each_line_under_its_own_start(size) -> None:
    from linkdeck.ui.screens.diagnose_screen import DiagnoseScreen
    from tests.synthetic import SyntheticAdapter, opener_for, physical
    from tests.ui.test_ui_app import FAST, HostSpec

    adapters = {name: SyntheticAdapter([physical("eth0")], rate_bps={"eth0": 8e6}) for name in ("a", "b")}
    app = LinkdeckApp(
        FAST, [HostSpec("a", address="a.invalid"), HostSpec("b", address="b.invalid")], opener=opener_for(adapters)
    )

    async def run_pair(*args, **kwargs):
        return degraded_outcome()

    app.tests.run_pair = run_pair
    async with app.run_test(size=size) as pilot:
        await wait_for(lambda: all(app.updates[h].interfaces for h in ("a", "b")), 10.0, message="both hosts live")
        screen = DiagnoseScreen("a", "b")
        await app.push_screen(screen)
        await wait_for(lambda: screen.judged is not None, 30.0, message="the verdict")
        body = screen.query_one("#diagnose-page", Static)
        before = None

        async def held() -> bool:  # a scrollbar takes its columns a frame after the text is drawn
            nonlocal before
            await pilot.pause()
            now = body.content_size.width, body.size.height
            steady, before = now == before, now
            return steady

        await wait_for(held, 10.0, message="a steady width")
        width = body.content_size.width
        drawn = [body.render_line(y).text.rstrip() for y in range(body.size.height)]
        page = [line.rstrip() for line in screen.page]  # the page's lines, unwrapped
        assert max(len(line) for line in drawn) <= width
        # a line of the page, or the start of one too long; what follows wraps under its start, further in
        continued = [
            line for line in drawn if line and not any(p.startswith(line) for p in page) and line != "Esc closes."
        ]
        assert continued  # the evidence lines are wider than 200 columns
        for line in continued:
            assert line.startswith("    "), (width, line)
