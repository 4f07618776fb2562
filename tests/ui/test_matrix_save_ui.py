"""The matrix's j/v at 80×24 and 200×60 (issue 23): the exports go beside the recordings (the
user data directory, or ``[ui] save_dir``), never into the directory linkdeck was started
from, and the toast says the path.

The cells are a real iperf3 capture judged against constructed ends (test_result_panels_ui's
outcome); the tests are replaced by a function returning it."""

from __future__ import annotations

import csv
import json
from dataclasses import replace

import pytest

from linkdeck.settings.config import Settings
from linkdeck.ui.app import LinkdeckApp
from linkdeck.ui.screens.probe_screens import MatrixScreen
from tests.lab import wait_for
from tests.ui.test_result_panels_ui import SIZES, degraded_outcome


@pytest.mark.parametrize("configured", [True, False], ids=["save_dir", "user-data-dir"])
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_matrix_j_and_v_save_beside_the_recordings_and_say_where(monkeypatch, tmp_path, size, configured) -> None:
    started_in = tmp_path / "cwd"
    started_in.mkdir()
    monkeypatch.chdir(started_in)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    expected_dir = tmp_path / "saved" if configured else tmp_path / "xdg" / "linkdeck" / "recordings"
    outcome = degraded_outcome()

    async def run_pair(src, dst, **kwargs):
        return replace(outcome, result=replace(outcome.result, src=src, dst=dst))

    app = LinkdeckApp(Settings(save_dir=str(tmp_path / "saved") if configured else None), [])
    monkeypatch.setattr(app.tests, "run_pair", run_pair)
    async with app.run_test(size=size) as pilot:
        screen = MatrixScreen(["web1", "nas01"])
        app.push_screen(screen)
        await wait_for(lambda: len(screen.matrix.cells) == 1, 10.0, message="the pair's cell")
        for key, kind in (("j", "json"), ("v", "csv")):
            await pilot.press(key)
            saved = await wait_for(
                lambda kind=kind: list(expected_dir.glob(f"linkdeck-matrix-*.{kind}")), 5.0, message=f"the {kind} file"
            )
            said = [n.message for n in app._notifications if n.message.startswith("Saved ")]
            assert said and said[-1] == f"Saved {saved[0]}"
        data = json.loads(next(expected_dir.glob("*.json")).read_text())
        rows = list(csv.reader(next(expected_dir.glob("*.csv")).read_text().splitlines()))
    assert list(started_in.iterdir()) == []
    # the pair once (its test measured both directions), with the capture's rates
    assert len(rows) == 2
    assert {(c["src"], c["dst"]) for c in data["cells"]} == {("web1", "nas01")}
    assert all(c["forward_bps"] == outcome.result.forward_bps for c in data["cells"])
