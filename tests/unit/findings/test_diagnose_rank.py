"""`linkdeck diagnose`'s ranking (issue 21 §3), pure: what each step measured, constructed
with the seeds' numbers, ranked by evidence with what was ruled out. The real runs are in
test_diagnose_lab.py."""

from __future__ import annotations

from dataclasses import replace

from linkdeck.core.levels import Severity, Status
from linkdeck.core.model import Cause, Finding, PathMtu
from linkdeck.present.diagnose_page import diagnosis_json, diagnosis_text, rank
from linkdeck.probe.diagnose_steps import Diagnosis
from linkdeck.probe.every_address import AddressRun, Tested
from linkdeck.probe.host_verdict import judge_ceiling
from linkdeck.probe.session import failed_outcome
from linkdeck.probe.watched import Outcome
from linkdeck.verdict.rules import judge
from tests.builders import clean_gigabit, end, iface, update, view

PATH_1500 = PathMtu(forward=1500, reverse=1500, forward_mtu=1500, reverse_mtu=1500)


def outcome(result, ends):
    return Outcome(result, *ends, judge(result, *ends), "eth0", "eth0")


def ceiling(host: str, bps: float, speed: int = 1000) -> Outcome:
    r = clean_gigabit(src=host, dst=host, address="127.0.0.1", forward_bps=bps, reverse_bps=None)
    return replace(
        failed_outcome(host, host, "127.0.0.1", 1, "x"),
        result=r,
        verdict=judge_ceiling(r, (iface("eth0", speed_mbps=speed),)),
    )


def diagnosis(test: Outcome, findings=None, ceilings=(23e9, 19e9)) -> Diagnosis:
    d = Diagnosis("a", "b")
    for host in ("a", "b"):
        d.updates[host] = update(host, 1.0, view(iface("eth0", speed_mbps=1000)))
        d.findings[host] = tuple((findings or {}).get(host, ()))
    d.ceilings = {h: ceiling(h, bps) for h, bps in zip(("a", "b"), ceilings)}
    d.test = test
    return d


def gig_ends():
    return end("a", speed_mbps=1000, duplex="full"), end("b", speed_mbps=1000, duplex="full")


def test_a_clean_pair_says_nothing_wrong_and_rules_out_the_hosts_and_mtu() -> None:
    d = diagnosis(outcome(clean_gigabit(path_mtu=PATH_1500), gig_ends()))
    j = rank(d)
    assert (j.status, j.causes) == (Status.OK, ())
    assert j.summary.startswith("nothing wrong")
    assert j.ruled_out[:3] == (
        "host ceilings 23.0 Gb/s and 19.0 Gb/s: not the hosts",
        "path MTU 1500 both ways: not MTU",
        "no findings on a or b: not the hosts' interfaces",
    )
    doc = diagnosis_json(d, j)
    assert (doc["verdict"], doc["causes"]) == ("ok", [])
    assert set(doc["steps"]) == {"ends", "ceilings", "test", "addresses"}
    assert doc["steps"]["test"]["path_mtu"] == {"forward": 1500, "reverse": 1500}
    text = diagnosis_text(d, j)
    assert "1. Both ends alone" in text and "2. The path" in text and "3. Verdict: OK — nothing wrong" in text
    assert "eth0 1G full MTU 1500" in text


def test_a_100_mbit_hop_between_gigabit_ends_is_the_bottleneck_first_and_the_hosts_are_ruled_out() -> None:
    d = diagnosis(outcome(clean_gigabit(forward_bps=94e6, reverse_bps=93e6, path_mtu=PATH_1500), gig_ends()))
    j = rank(d)
    assert j.status is Status.BAD and j.causes[0].code == "BOTTLENECK"
    assert j.causes[0].next.startswith("find the slow hop")
    assert "host ceilings 23.0 Gb/s and 19.0 Gb/s: not the hosts" in j.ruled_out
    assert "path MTU 1500 both ways: not MTU" in j.ruled_out


def test_a_path_mtu_below_the_ends_is_first_and_mtu_is_not_ruled_out() -> None:
    jumbo = PathMtu(forward=1500, reverse=1500, forward_mtu=9000, reverse_mtu=9000)
    ends = end("a", speed_mbps=1000, mtu=9000), end("b", speed_mbps=1000, mtu=9000)
    d = diagnosis(outcome(clean_gigabit(forward_bps=2e6, reverse_bps=3e6, path_mtu=jumbo), ends))
    j = rank(d)
    assert j.causes[0].code == "PATH_MTU" and "`linkdeck mtu a b` re-checks" in j.causes[0].next
    assert not any("not MTU" in line for line in j.ruled_out)


def test_a_hosts_own_configuration_degrades_a_fine_test_and_ranks_below_a_measured_bottleneck() -> None:
    two = Finding(
        "TWO_IFACES_ONE_SUBNET",
        Severity.ERROR,
        "b",
        "eth1",
        "two interfaces in 10.0.0.0/24",
        "eth0, eth1 in 10.0.0.0/24",
        "keep one",
    )
    fine = diagnosis(outcome(clean_gigabit(path_mtu=PATH_1500), gig_ends()), {"b": [two]})
    j = rank(fine)
    assert j.status is Status.DEGRADED and [c.code for c in j.causes] == ["TWO_IFACES_ONE_SUBNET"]
    assert (j.causes[0].message, j.causes[0].next, j.causes[0].host) == (
        "b eth1: two interfaces in 10.0.0.0/24",
        "keep one",
        "b",
    )
    assert not any("no findings" in line for line in j.ruled_out)
    slow = diagnosis(
        outcome(clean_gigabit(forward_bps=94e6, reverse_bps=93e6, path_mtu=PATH_1500), gig_ends()), {"b": [two]}
    )
    assert [c.code for c in rank(slow).causes] == ["BOTTLENECK", "TWO_IFACES_ONE_SUBNET"]


def test_a_low_ceiling_is_the_cause_only_when_the_test_came_near_it() -> None:
    near = diagnosis(
        outcome(clean_gigabit(forward_bps=400e6, reverse_bps=390e6, path_mtu=PATH_1500), gig_ends()),
        ceilings=(23e9, 450e6),
    )
    j = rank(near)
    assert j.causes[0].code == "CEILING_LOW" and j.causes[0].host == "b"
    assert not any(line.startswith("host ceiling") for line in j.ruled_out)
    far = diagnosis(
        outcome(clean_gigabit(forward_bps=94e6, reverse_bps=93e6, path_mtu=PATH_1500), gig_ends()),
        ceilings=(23e9, 450e6),
    )
    k = rank(far)
    assert [c.code for c in k.causes] == [
        "BOTTLENECK",
        "CEILING_LOW",
    ]  # the path's, then the host's own (not this test's)
    assert (
        "host ceilings 23.0 Gb/s and 450 Mb/s, far above the 93.0 Mb/s measured: not what held this test back"
        in k.ruled_out
    )


def test_a_test_that_could_not_run_is_an_error_and_rules_nothing_out_about_the_path() -> None:
    d = diagnosis(failed_outcome("a", "b", "", 3, "iperf3 not found on b: `apt install iperf3`"))
    j = rank(d)
    assert j.status is Status.ERROR and j.summary == "the test did not run: iperf3 not found on b: `apt install iperf3`"
    assert not any("MTU" in line or "not the path" in line for line in j.ruled_out)


def test_the_page_while_it_runs_says_what_is_still_being_measured_not_that_it_was_not() -> None:
    """The dashboard's ``d`` redraws the page as each step finishes: a ceiling still running is
    "measuring", a host with no sample "not measured", and no verdict before the end."""
    d = diagnosis(None, ceilings=())
    d.failed["b"] = "b: unreachable: no route"
    page = diagnosis_text(d, None, frozenset({"ends"}))
    assert "a: live" in page and "b: b: unreachable: no route" in page
    assert page.count("loopback: measuring its ceiling…") == 1 and "loopback: ceiling not measured" in page
    assert "  tested after both ends" in page and page.endswith("3. Verdict: when the steps above finish\n")
    d.ceilings = {"a": ceiling("a", 23e9)}
    page = diagnosis_text(d, None, frozenset({"ends", "ceilings"}))
    assert "measuring" not in page and "  testing…" in page and "ruled out" not in page
    assert "testing…" not in diagnosis_text(d, rank(d))  # a finished run names no step as running


def test_the_dashboard_stands_in_for_the_watch_with_its_updates_and_its_own_findings() -> None:
    from types import SimpleNamespace

    from linkdeck.core.model import HostState, HostUpdate
    from linkdeck.ui.screens.diagnose_screen import AppWatch

    mine = Finding("HALF_DUPLEX", Severity.WARNING, "a", "eth0", "half duplex", "eth0 half", "set full duplex")
    live = replace(update("a", 1.0, view(iface("eth0"))), received=1.0, fresh_until=3.0)
    gone = HostUpdate(host="b", os=None, state=HostState.UNREACHABLE, error="no route to host")
    watch = AppWatch(SimpleNamespace(updates={"a": live, "b": gone}, findings=[mine], clock=lambda: 2.0))
    assert watch.latest("a") is live and watch.failed("a") is None
    assert watch.failed("b") == "b: unreachable: no route to host" and watch.failed("c") == "c: not watched"
    # a host that went quiet: its last numbers are not a live end to diagnose from
    watch.app.clock = lambda: 11.0
    assert watch.failed("a") == "a: stale; its last sample is 10 s old"  # never "live"
    assert watch.findings() == [mine]


# -- issue 29 §3: measured on this path first, concrete next steps (constructed causes with
# the words and figures the lab's runs printed) ---------------------------------------------

RETRANSMITS = Cause("RETRANSMITS", "retransmits 0.12 % of segments", "a → b 0.12 %, b → a 0.10 %")
ALONE = Cause(
    "ALONE_ALSO_SLOW",
    "alone also slow (a → b 94.1 Mb/s, b → a 93.2 Mb/s): the path",
    "each alone 94.1 Mb/s and 93.2 Mb/s",
)
SPEED_WRONG = Cause(
    "SPEED_WRONG", "measured above the 1 Gb/s a eth1 reports: the speed figure is wrong", "a eth1: speed 1 Gb/s"
)


def with_causes(o: Outcome, *extra: Cause, first: bool = True) -> Outcome:
    causes = (*extra, *o.verdict.causes) if first else (*o.verdict.causes, *extra)
    return replace(o, verdict=replace(o.verdict, causes=causes))


def no_placeholders(j) -> None:
    for c in j.causes:
        assert "see the evidence" not in c.next and "SRC" not in c.next and "DST" not in c.next, c


def test_a_bottleneck_heads_the_page_with_its_figure_and_carries_each_alone_and_retransmits_under_it() -> None:
    slow = outcome(clean_gigabit(forward_bps=94e6, reverse_bps=93e6, path_mtu=PATH_1500), gig_ends())
    d = diagnosis(with_causes(slow, ALONE, RETRANSMITS))
    j = rank(d)
    assert [c.code for c in j.causes] == ["BOTTLENECK"]
    assert j.summary.startswith("a bottleneck near 9")
    assert "alone also slow (a → b 94.1 Mb/s" in j.causes[0].evidence and "retransmits 0.12 %" in j.causes[0].evidence
    assert "`linkdeck matrix a b`" in j.causes[0].next
    no_placeholders(j)
    # each folded cause is told as its words, then its figures, without nesting parentheses
    assert "with it: alone also slow (a → b 94.1 Mb/s, b → a 93.2 Mb/s): the path — each alone 94.1 Mb/s" in (
        j.causes[0].evidence
    )
    assert "retransmits 0.12 % of segments — a → b 0.12 %, b → a 0.10 %" in j.causes[0].evidence


def test_a_broken_address_ranks_above_a_speed_figure_and_retransmits_and_names_its_address() -> None:
    d = diagnosis(
        with_causes(
            outcome(clean_gigabit(forward_bps=900e6, reverse_bps=880e6, path_mtu=PATH_1500), gig_ends()),
            SPEED_WRONG,
            RETRANSMITS,
        )
    )
    d.test = replace(d.test, verdict=replace(d.test.verdict, status=Status.DEGRADED))
    broken = Cause(
        "PATH_DIFFERS",
        "a → b from 198.18.77.21 (eth1) carried nothing, 900 Mb/s from 198.18.77.20 (eth0): "
        "replies may leave by eth0 (asymmetric path)",
        "b → a 23.2 kb/s via 198.18.77.21 (eth1) vs 900 Mb/s via 198.18.77.20 (eth0), 0 %",
    )
    d.addresses = AddressRun(
        "a",
        "b",
        (Tested("198.18.77.20", "eth0", (), (), d.test), Tested("198.18.77.21", "eth1", (), (), d.test)),
        (broken,),
    )
    j = rank(d)
    assert [c.code for c in j.causes] == ["PATH_DIFFERS", "SPEED_WRONG", "RETRANSMITS"]
    assert "`linkdeck mtu a b --address 198.18.77.21`" in j.causes[0].next
    no_placeholders(j)


def test_nothing_under_ruled_out_contradicts_an_mtu_cause() -> None:
    jumbo = PathMtu(forward=1500, reverse=1500, forward_mtu=9000, reverse_mtu=9000)
    ends = end("a", speed_mbps=1000, mtu=9000), end("b", speed_mbps=1000, mtu=9000)
    j = rank(diagnosis(outcome(clean_gigabit(forward_bps=2e6, reverse_bps=3e6, path_mtu=jumbo), ends)))
    assert j.causes[0].code == "PATH_MTU"
    assert not any("not the hosts' interfaces" in line for line in j.ruled_out)
    no_placeholders(j)


def test_a_clean_pair_says_nothing_wrong_with_its_figure_and_nothing_that_sounds_like_a_problem() -> None:
    j = rank(diagnosis(outcome(clean_gigabit(path_mtu=PATH_1500), gig_ends())))
    assert j.summary.startswith("nothing wrong: ") and "Mb/s measured" in j.summary
    assert not any(word in j.summary for word in ("suspect", "wrong;", "slow"))


def test_step_one_leaves_out_a_tcp_line_with_no_interval_yet() -> None:
    from linkdeck.core.tcpstats import TcpRates

    d = diagnosis(outcome(clean_gigabit(path_mtu=PATH_1500), gig_ends()))
    d.updates["a"] = replace(d.updates["a"], tcp=TcpRates())
    d.updates["b"] = replace(d.updates["b"], tcp=TcpRates(out_segs_ps=10.0, retrans_segs_ps=0.0, in_segs_ps=12.0))
    text = diagnosis_text(d, rank(d))
    assert "no interval measured yet" not in text
    assert [line.strip().split(" ")[1] for line in text.splitlines() if line.strip().startswith("TCP:")] == ["sent"]


def test_a_second_address_whose_path_carries_less_than_is_sent_is_explained_by_its_path_mtu() -> None:
    """The lab's d → a: a's eth1 (MTU 1400) beside eth0 in one subnet; the test to eth1's
    address moved 38.5 kb/s d → a, and the path MTU probed to it was 1400 that way."""
    d = diagnosis(outcome(clean_gigabit(forward_bps=900e6, reverse_bps=880e6, path_mtu=PATH_1500), gig_ends()))
    fast = d.test
    small = PathMtu(forward=1400, reverse=1500, forward_mtu=1500, reverse_mtu=1500)
    slow = outcome(replace(fast.result, forward_bps=38.5e3, path_mtu=small), gig_ends())
    broken = Cause(
        "PATH_DIFFERS",
        "a → b to 198.18.77.21 (eth1) is 23377× slower than to 198.18.77.20 (eth0): "
        "replies may leave by eth0 (asymmetric path)",
        "a → b 38.5 kb/s via 198.18.77.21 (eth1) vs 900 Mb/s via 198.18.77.20 (eth0), <0.001%",
    )
    d.addresses = AddressRun(
        "a",
        "b",
        (Tested("198.18.77.20", "eth0", (), (), fast), Tested("198.18.77.21", "eth1", (), (), slow)),
        (broken,),
    )
    j = rank(d)
    assert [c.code for c in j.causes] == ["PATH_MTU"], [c.code for c in j.causes]
    first = j.causes[0]
    assert first.message == (
        "a → b via 198.18.77.21 (eth1) carries 1400-byte packets; "
        "the sender's interface uses 1500: a → b moved 38.5 kb/s through it"
    )
    assert "23377× slower" in first.evidence and "`linkdeck mtu a b --address 198.18.77.21`" in first.next
    # a direction that moved next to nothing through one address is broken: the page says BAD
    assert j.status is Status.BAD and j.summary == first.message
    assert not any("not MTU" in line for line in j.ruled_out)
    # the main address's clean test rules out that address's path, not the path as a whole
    (clean,) = [line for line in j.ruled_out if "the test" in line]
    assert clean.endswith(f"not the path to {fast.result.address}"), clean


def test_the_commands_watch_calls_a_host_gone_quiet_stale_and_the_page_never_says_live() -> None:
    """``linkdeck diagnose``/``test``'s own watch, as the dashboard's: a host whose frames
    stopped after samples is not a live end, and the page writes its state as stale."""
    from linkdeck.probe.session import Watch
    from linkdeck.settings.config import HostSpec, Settings

    watch = Watch([HostSpec("a", "192.0.2.1")], Settings())
    collector = watch.fleet.collectors["a"]
    collector.samples_seen = 3
    collector.last = replace(update("a", 1.0, view(iface("eth0"))), received=1.0, fresh_until=3.0)
    watch.updates["a"] = collector.last
    watch.clock = lambda: 2.0
    assert watch.failed("a") is None
    watch.clock = lambda: 11.0
    assert watch.failed("a") == "a: stale; its last sample is 10 s old"  # was None: tested as live
    d = diagnosis(None, ceilings=())
    d.updates["a"] = replace(d.updates["a"], stale=True, received=1.0)
    assert "  a: stale, " in diagnosis_text(d, None, frozenset({"ends"}))  # was "a: live, "


def test_two_conditions_are_said_first_and_also_not_first_twice() -> None:
    from linkdeck.core.codes import Code
    from linkdeck.present.diagnose_page import Ranked

    d = diagnosis(outcome(clean_gigabit(path_mtu=PATH_1500), gig_ends()))
    another = Ranked(Code.ANOTHER_TEST, "an iperf3 ran on b during the test", "pid 4242", "again later", "b")
    shared = Ranked(Code.SHARED_PATH, "another 38.8 Mb/s crossed a eth0", "in all 99.0 Mb/s", "again later", "a")
    text = diagnosis_text(d, replace(rank(d), conditions=(another, shared)))
    said = [line.strip().split(":")[0] for line in text.splitlines() if line.strip().startswith(("first:", "also:"))]
    assert said == ["first", "also"]


def test_the_ends_own_findings_rank_errors_before_warnings_whichever_end_has_them() -> None:
    # The lab's d → a: d's two interfaces in one subnet (a warning) were listed above a's eth1 at
    # MTU 1400 (an error) because d is the source.
    spare = Finding("TWO_IFACES_ONE_SUBNET", Severity.WARNING, "a", "eth1", "two in one subnet", "e", "keep one")
    wrong = Finding("MTU_MISMATCH", Severity.ERROR, "b", "eth1", "eth1 uses MTU 1400", "e", "raise it to 1500")
    d = diagnosis(outcome(clean_gigabit(path_mtu=PATH_1500), gig_ends()), {"a": [spare], "b": [wrong]})
    assert [c.code for c in rank(d).causes] == ["MTU_MISMATCH", "TWO_IFACES_ONE_SUBNET"]
