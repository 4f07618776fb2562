"""Each direction alone after a --bidir test fell short (issue 21 §2; esnet/iperf#1836:
pfSense boxes fast each way alone, slow both at once). Constructed results with the issue's
numbers on a 10G path; the real re-run is in test_iperf3_eras_lab.py."""

from __future__ import annotations

from dataclasses import replace

from linkdeck.present.outcome import report_text
from linkdeck.probe.alone import needs_alone, with_alone
from linkdeck.probe.pairs import outcome_json
from linkdeck.probe.session import failed_outcome
from linkdeck.verdict.rules import judge
from tests.builders import cause_codes, clean_gigabit, end

BIDIR = {"sum_sent": {}, "sum_received": {}, "sum_sent_bidir_reverse": {}, "sum_received_bidir_reverse": {}}


def together(**kw):
    base = dict(
        src="fw1",
        dst="fw2",
        forward_bps=5.1e9,
        reverse_bps=4.8e9,
        raw_end=BIDIR,
        iperf3_version="3.21",
        single_threaded=False,
    )
    return clean_gigabit(**{**base, **kw})


def ten_gig():
    return end("fw1", speed_mbps=10000), end("fw2", speed_mbps=10000)


def test_a_short_bidir_without_a_cause_is_checked_alone_and_the_ends_are_named() -> None:
    r = together()
    v = judge(r, *ten_gig())
    assert v.status == "degraded" and v.causes == ()
    assert needs_alone(r, v)
    checked = replace(r, alone={"forward_bps": 9.4e9, "reverse_bps": 9.3e9, "duration_s": 2.0})
    w = with_alone(checked, v)
    assert cause_codes(w) == ["BIDIR_ONLY"]
    assert w.summary == "the ends cannot do both directions at once; the path is fine"
    assert (
        w.causes[0].evidence
        == "alone 9.40 Gb/s / 9.30 Gb/s, together 5.10 Gb/s / 4.80 Gb/s (fw1 → fw2 / fw2 → fw1; each alone for 2.0 s)"
    )
    o = replace(failed_outcome("fw1", "fw2", "10.0.0.2", 5, "x"), result=checked, verdict=w)
    assert outcome_json(o)["alone"] == {"forward_bps": 9.4e9, "reverse_bps": 9.3e9, "duration_s": 2.0}
    assert "Each alone" in report_text(o) and "9.40 Gb/s / 9.30 Gb/s" in report_text(o)


def test_alone_also_slow_is_the_path() -> None:
    r = together(forward_bps=3.0e9, reverse_bps=3.1e9)
    v = judge(r, *ten_gig())
    assert v.status == "bad" and cause_codes(v) == ["BOTTLENECK"] and needs_alone(r, v)
    w = with_alone(replace(r, alone={"forward_bps": 3.2e9, "reverse_bps": 9.3e9, "duration_s": 2.0}), v)
    assert cause_codes(w) == ["BOTTLENECK", "ALONE_ALSO_SLOW"]  # the plateau first, each alone with it
    assert w.summary == f"{v.summary}; alone also slow (fw1 → fw2): the path"
    assert v.summary.startswith("a bottleneck near")
    assert w.status == v.status


def test_no_check_where_a_cause_is_named_or_the_test_was_not_both_at_once() -> None:
    ok = together(forward_bps=9.4e9, reverse_bps=9.3e9)
    assert not needs_alone(ok, judge(ok, *ten_gig()))  # not short
    hot = together(cpu_src_pct=99.0, single_threaded=True, src_iperf3="3.12")
    v = judge(hot, *ten_gig())
    assert cause_codes(v) == ["SENDER_CPU"] and not needs_alone(hot, v)  # a named cause
    split = together(raw_end={"forward": {}, "reverse": {}})  # iperf3 < 3.7: one way at a time already
    assert not needs_alone(split, judge(split, *ten_gig()))
    unknown = together()
    v = judge(unknown, end("fw1"), end("fw2", speed_mbps=None))
    assert not needs_alone(unknown, v)  # no expected figure: nothing fell short
