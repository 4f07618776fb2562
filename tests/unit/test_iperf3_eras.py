"""Both iperf3 eras in a test's words (issue 21 §2): each end's version, what helps a
CPU-bound end on its version, and parallel streams (-P) from the command line to iperf3's
command. Constructed results with the seeds' numbers; the real runs are in
test_iperf3_eras_lab.py."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from linkdeck.core import model
from linkdeck.present.outcome import iperf3_words
from linkdeck.probe import templates as cmd
from linkdeck.probe.failures import ProbeError
from linkdeck.probe.pairs import outcome_json
from linkdeck.probe.session import failed_outcome
from linkdeck.verdict.rules import judge
from tests.builders import cause_codes, clean_gigabit, end
from tests.cli import linkdeck

OLD_HELP = "this iperf3 runs every stream on one thread (upgrade to ≥ 3.16, or run several iperf3 processes)"


def ten_gig() -> tuple[model.EndState, model.EndState]:
    return end("opnsense", speed_mbps=10000), end("kube01", speed_mbps=10000)


def seed_000(**kw) -> model.TestResult:
    return clean_gigabit(src="opnsense", dst="kube01", forward_bps=5.0e9, reverse_bps=5.1e9, **kw)


def test_an_old_cpu_bound_sender_is_told_to_upgrade_or_run_several_processes() -> None:
    # seed 000: OPNsense's iperf3 3.9 at 98.5 % of its one thread, 5 Gb/s of a 10G path
    r = seed_000(cpu_src_pct=98.54, cpu_dst_pct=40.0, iperf3_version="3.9 / 3.21", src_iperf3="3.9", dst_iperf3="3.21")
    v = judge(r, *ten_gig())
    assert cause_codes(v) == ["SENDER_CPU"]
    assert v.causes[0].evidence == (
        "iperf3 on opnsense: CPU sender 99% (single-threaded iperf3 3.9: 90% is its ceiling here); measured "
        f"opnsense → kube01 5.00 Gb/s (53% of expected), kube01 → opnsense 5.10 Gb/s (54% of expected); {OLD_HELP}"
    )


def test_a_new_cpu_bound_end_is_told_one_stream_is_one_core() -> None:
    # 3.21 at both ends, one stream each way (--bidir: two threads an end): 185 % is both cores
    r = seed_000(
        cpu_src_pct=40.0,
        cpu_dst_pct=185.0,
        iperf3_version="3.21",
        single_threaded=False,
        src_iperf3="3.21",
        dst_iperf3="3.21",
        raw_end={"streams": [{}, {}]},
    )
    v = judge(r, *ten_gig())
    assert cause_codes(v) == ["RECEIVER_CPU"]
    evidence = v.causes[0].evidence
    assert evidence.startswith(
        "iperf3 on kube01: CPU receiver 185% (multi-threaded iperf3 3.21: 180% is its ceiling here)"
    )
    assert evidence.endswith("; one stream is one core: try `-P 4`")
    # with -P 4 already, more streams
    four = replace(r, streams=4, raw_end={"streams": [{}] * 2}, cpu_dst_pct=190.0)
    assert judge(four, *ten_gig()).causes[0].evidence.endswith("try `-P 8`")


def test_the_ceiling_is_each_ends_own_and_follows_the_stream_count() -> None:
    # A 3.12 receiver at 95 % is at its one thread's ceiling; a 3.21 sender at 95 % over two
    # threads is not, whatever the other end runs.
    r = seed_000(
        cpu_src_pct=95.0,
        cpu_dst_pct=95.0,
        iperf3_version="3.21 / 3.12",
        single_threaded=True,
        src_iperf3="3.21",
        dst_iperf3="3.12",
        raw_end={"streams": [{}, {}]},
    )
    assert cause_codes(judge(r, *ten_gig())) == ["RECEIVER_CPU"]
    # -P 4 each way, one run: eight threads on a 3.21 end; 350 % is not its ceiling
    wide = replace(r, streams=4, raw_end={"streams": [{}] * 8}, cpu_src_pct=350.0, cpu_dst_pct=20.0)
    assert "SENDER_CPU" not in cause_codes(judge(wide, *ten_gig()))
    # without iperf3's stream list, the stream count sets it: 2 × 90 %
    bare = replace(r, streams=2, raw_end={}, cpu_src_pct=170.0, cpu_dst_pct=20.0)
    assert "SENDER_CPU" not in cause_codes(judge(bare, *ten_gig()))
    assert "SENDER_CPU" in cause_codes(judge(replace(bare, cpu_src_pct=181.0), *ten_gig()))


def test_each_ends_version_and_the_streams_in_the_title_and_json() -> None:
    mixed = clean_gigabit(iperf3_version="3.12 / 3.21", src_iperf3="3.12", dst_iperf3="3.21", streams=4)
    assert iperf3_words(mixed) == ["iperf3 a 3.12, b 3.21", "-P 4"]
    same = clean_gigabit(src_iperf3="3.12", dst_iperf3="3.12")
    assert iperf3_words(same) == ["iperf3 3.12"]
    o = failed_outcome("a", "b", "10.0.0.2", 5, "x")
    doc = outcome_json(replace(o, result=mixed))
    assert (doc["iperf3_version"], doc["streams"]) == ({"src": "3.12", "dst": "3.21"}, 4)
    assert json.loads(json.dumps(doc))["iperf3_version"]["dst"] == "3.21"


def test_parallel_streams_reach_iperf3_checked() -> None:
    assert cmd.client_script("10.0.0.2", 5201, 3, "bidir", True, 4) == (
        "echo $$; exec iperf3 -c 10.0.0.2 -p 5201 --bidir -P 4 -J -t 3 --connect-timeout 3000 2>&1"
    )
    assert " -P " not in cmd.client_script("10.0.0.2", 5201, 3, "bidir", True, 1)
    for bad in (0, 129, True, 2.5, "4; reboot"):
        with pytest.raises(ProbeError, match="parallel streams must be a number of parallel streams"):
            cmd.client_script("10.0.0.2", 5201, 3, "bidir", True, bad)


@pytest.mark.parametrize("command", ["test", "matrix"])
def test_parallel_out_of_range_is_a_usage_error(command: str) -> None:
    proc = linkdeck(command, "local", "local", "--parallel", "0")
    assert proc.returncode == 2
    assert "--parallel must be a number of parallel streams (1-128), not 0" in proc.stderr


def test_streams_in_the_config_file_are_checked(tmp_path) -> None:
    bad = tmp_path / "c.toml"
    bad.write_text("[test]\nstreams = 500\n")
    proc = linkdeck("test", "local", "local", "--config", str(bad))
    assert proc.returncode == 2 and "test.streams: must be a number of parallel streams (1-128), not 500" in proc.stderr
