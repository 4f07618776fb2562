"""A test beside other traffic (issue 29 §1): the ends' counters carried more than iperf3's own
frames, so the verdict says the path was shared first and judges it on what it carried in all.
Constructed results with the issue's lab numbers: a transfer e → b of about 55 Mb/s through a
100 Mbit/s hop while e → b is tested between two 1 Gb/s ends."""

from __future__ import annotations

from dataclasses import replace

from linkdeck.core.codes import Code
from linkdeck.core.model import EndState, TestResult as Result
from linkdeck.present.outcome import report_text
from linkdeck.probe.alone import needs_alone
from linkdeck.probe.pairs import outcome_json
from linkdeck.probe.session import failed_outcome
from linkdeck.verdict.rules import judge
from linkdeck.verdict.shared_path import crossings, framing
from tests.builders import cause_codes, clean_gigabit, end

BIDIR = {"sum_sent": {}, "sum_received": {}, "sum_sent_bidir_reverse": {}, "sum_received_bidir_reverse": {}}
FRAMES = 1514 / 1448  # counters' bits per bit of goodput at MTU 1500 (IPv4, timestamps)


def ends() -> tuple[EndState, EndState]:
    return end("e"), end("b")


def beside_a_transfer(other_bps: float = 55e6, forward: float = 41e6, reverse: float = 90e6) -> Result:
    """e → b carried ``forward`` of iperf3's and ``other_bps`` of someone else's; b → e only
    iperf3's reverse, with the ACKs of everything going the other way beside it."""
    fwd, rev = forward * FRAMES, reverse * FRAMES
    acks = 0.022
    counters = {
        "src_tx": fwd + other_bps + acks * rev,
        "dst_rx": fwd + other_bps + acks * rev,
        "dst_tx": rev + acks * (fwd + other_bps),
        "src_rx": rev + acks * (fwd + other_bps),
    }
    return clean_gigabit(
        src="e",
        dst="b",
        forward_bps=forward,
        reverse_bps=reverse,
        forward_retransmits=40,
        reverse_retransmits=3,
        raw_end=BIDIR,
        counters_bps=counters,
    )


def test_a_test_beside_a_transfer_says_the_path_was_shared_first() -> None:
    r = beside_a_transfer()
    v = judge(r, *ends())
    assert [c.code for c in v.conditions] == ["SHARED_PATH"]
    shared = v.conditions[0]
    assert shared.message == "another 55.0 Mb/s crossed b eth0 during the test: the path was shared"
    assert "the path carried 97.9 Mb/s in all (iperf3 42.9 Mb/s + other traffic 55.0 Mb/s)" in shared.evidence
    assert v.summary.startswith(
        "another 55.0 Mb/s crossed b eth0 during the test: the path was shared; the path carried 97.9 Mb/s in all "
        "(iperf3 42.9 Mb/s + other traffic 55.0 Mb/s): about what a 100 Mb/s hop carries"
    )
    # no share of the expected figure, no shape and no retransmits read from iperf3's share
    assert v.pct_of_expected is None
    assert "ASYMMETRY" not in cause_codes(v) and "RETRANSMITS" not in cause_codes(v)
    assert not needs_alone(r, v)
    # the path is judged on what it carried in all: a 100 Mb/s hop between 1 Gb/s ends
    assert cause_codes(v) == ["BOTTLENECK"] and v.status == "bad"
    # one figure for what the path carried in all: the message's is the evidence's
    assert v.causes[0].message == "a bottleneck near 97.9 Mb/s in all below both 1 Gb/s links"
    assert "about what a 100 Mb/s hop carries" in v.causes[0].evidence


def test_the_same_test_alone_is_judged_on_iperf3s_figures() -> None:
    # the same path with nothing else on it: no condition, the percentages stand
    r = beside_a_transfer(other_bps=0.0, forward=94e6, reverse=94e6)
    v = judge(r, *ends())
    assert v.conditions == () and v.pct_of_expected is not None and v.pct_of_expected < 11
    assert cause_codes(v)[0] == "BOTTLENECK" and "in all" not in v.causes[0].message


def test_the_condition_reaches_the_text_and_the_json_before_any_cause() -> None:
    r = beside_a_transfer()
    v = judge(r, *ends())
    o = replace(failed_outcome("e", "b", "10.0.0.2", 5, "x"), result=r, verdict=v)
    text = report_text(o)
    assert text.index("SHARED_PATH: another 55.0 Mb/s crossed b eth0") < text.index("BOTTLENECK:")
    doc = outcome_json(o)
    assert [c["code"] for c in doc["conditions"]] == ["SHARED_PATH"] and [c["code"] for c in doc["causes"]] == [
        "BOTTLENECK"
    ]
    assert list(doc).index("conditions") < list(doc).index("causes")


def test_counters_within_their_own_error_are_no_other_traffic() -> None:
    # a clean unshaped veth test: receiver counters 1.6 % over iperf3's frames, ACKs of the
    # other direction on each rx; and a black-holed direction whose rx holds only the ACKs
    # of 958 Mb/s the other way
    clean = clean_gigabit(forward_bps=9.1e9, reverse_bps=8.7e9)
    f = framing(clean, *ends())
    clean = replace(
        clean,
        counters_bps={
            "src_tx": 9.1e9 * f * 1.016,
            "dst_rx": 9.1e9 * f * 1.016 + 0.03 * 8.7e9 * f,
            "dst_tx": 8.7e9 * f,
            "src_rx": 8.7e9 * f * 1.02,
        },
    )
    assert crossings(clean, *ends()) == ()
    holed = clean_gigabit(forward_bps=958e6, reverse_bps=23.2e3)
    holed = replace(
        holed,
        counters_bps={
            "src_tx": 958e6 * f,
            "dst_rx": 958e6 * f,
            "dst_tx": 40e3,
            "src_rx": 23.2e3 * f + 0.045 * 958e6 * f,
        },
    )
    assert crossings(holed, *ends()) == ()
    assert judge(holed, *ends()).conditions == ()


def test_a_clean_test_prints_no_discrepancy_but_a_shared_one_does() -> None:
    clean = clean_gigabit(forward_bps=941e6, reverse_bps=938e6)
    f = framing(clean, *ends())
    clean = replace(
        clean, counters_bps={"src_tx": 941e6 * f, "dst_rx": 941e6 * f * 0.959, "dst_tx": 938e6 * f, "src_rx": 938e6 * f}
    )
    o = replace(failed_outcome("a", "b", "10.0.0.2", 5, "x"), result=clean, verdict=judge(clean, *ends()))
    assert "vs iperf3's frames" not in report_text(o)
    shared = beside_a_transfer()
    o = replace(o, result=shared, verdict=judge(shared, *ends()))
    assert "receiver rx +133% vs iperf3's frames" in report_text(o)


def test_a_recorded_shared_test_reads_back_with_its_condition() -> None:
    import json

    from linkdeck.commands.recorded import outcome_from_json
    from linkdeck.recording.recorder import _plain

    r = beside_a_transfer()
    e, b = ends()
    o = replace(failed_outcome("e", "b", "10.0.0.2", 5, "x"), result=r, src=e, dst=b, verdict=judge(r, e, b))
    back = outcome_from_json(json.loads(json.dumps(_plain(o))))
    assert back.verdict.conditions == o.verdict.conditions and back.verdict.conditions[0].code is Code.SHARED_PATH
    assert report_text(back) == report_text(o)


def test_a_recorded_code_this_version_does_not_know_reads_back_by_its_word() -> None:
    import json

    from linkdeck.commands.recorded import outcome_from_json
    from linkdeck.recording.recorder import _plain

    r = beside_a_transfer()
    e, b = ends()
    o = replace(failed_outcome("e", "b", "10.0.0.2", 5, "x"), result=r, src=e, dst=b, verdict=judge(r, e, b))
    data = json.loads(json.dumps(_plain(o)))
    data["verdict"]["conditions"][0]["code"] = "SHARED_LINK"  # as a newer linkdeck might name it
    back = outcome_from_json(data)
    assert back.verdict.conditions[0].code == "SHARED_LINK"
    assert report_text(back) == report_text(o).replace("SHARED_PATH", "SHARED_LINK")


def test_other_traffic_is_a_rate_over_the_window_between_the_reads() -> None:
    # the reads around a 5 s test were 7.5 s apart (a slow session start): the other
    # transfer's 55 Mb/s ran all that while, so the counters, divided by iperf3's 5 s, show
    # it as 82.5 Mb/s; the path in all is judged on the rate, not on that
    r = beside_a_transfer(other_bps=55e6 * 7.5 / 5)
    v = judge(replace(r, counters_window_s=7.5), *ends())
    assert v.conditions[0].message == "another 55.0 Mb/s crossed b eth0 during the test: the path was shared"
    assert "the path carried 97.9 Mb/s in all (iperf3 42.9 Mb/s + other traffic 55.0 Mb/s)" in v.conditions[0].evidence
    # without the window the same counters would claim more than a 100 Mb/s hop carries
    assert "125 Mb/s in all" in judge(r, *ends()).conditions[0].evidence
