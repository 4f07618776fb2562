"""The judging words as types: their JSON form, their order, and the thresholds verdicts and
matrix cells share."""

from __future__ import annotations

import csv
import io
import json

import pytest

from linkdeck.core.levels import BAD_PCT, OK_PCT, Level, Severity, Status, Tone


def test_words_print_and_serialise_as_their_value():
    assert json.dumps({"s": Status.DEGRADED, "f": Severity.WARNING}) == '{"s": "degraded", "f": "warning"}'
    assert (str(Status.OK), f"{Status.BAD}", f"{Severity.INFO:>6}", Status.ERROR.upper()) == (
        "ok",
        "bad",
        "  info",
        "ERROR",
    )
    out = io.StringIO()
    csv.writer(out).writerow([Status.OK, Level.POOR])
    assert out.getvalue().strip() == "ok,poor"
    assert Status("bad") is Status.BAD and Status.BAD == "bad"


def test_rank_orders_from_harmless_to_worst():
    assert sorted(Severity, key=lambda s: s.rank) == [Severity.INFO, Severity.WARNING, Severity.ERROR]
    assert sorted(Status, key=lambda s: s.rank) == [Status.OK, Status.DEGRADED, Status.BAD, Status.ERROR]


def test_a_matrix_cell_and_a_verdict_read_the_same_lines():
    for pct, status, level in (
        (OK_PCT, Status.OK, Level.GOOD),
        (OK_PCT - 0.1, Status.DEGRADED, Level.FAIR),
        (BAD_PCT, Status.DEGRADED, Level.FAIR),
        (BAD_PCT - 0.1, Status.BAD, Level.POOR),
    ):
        assert (Status.of_pct(pct), Level.of_pct(pct)) == (status, level), pct
        assert status.tone is level.tone
    assert Level.of_pct(None) is Level.UNKNOWN


def test_every_word_has_a_tone_with_a_colour_for_each_output():
    for word in (*Severity, *Status, *Level):
        assert isinstance(word.tone, Tone) and word.tone.html.startswith("#")
    assert Status.BAD.tone is Severity.ERROR.tone is Level.POOR.tone is Tone.BAD


def test_a_word_is_read_back_from_its_json_value_and_nothing_else() -> None:
    assert Status.of("bad") is Status.BAD and Severity.of("warning") is Severity.WARNING
    assert Level.of("poor") is Level.POOR
    with pytest.raises(ValueError, match="'fatal' is not a Severity"):
        Severity.of("fatal")
