"""The path MTU probe over real SSH in the namespace lab (issue 10.2): two hosts at MTU 9000
on a bridge whose ports carry 1500 (offload off, so big frames stay big) are told apart from a
clean pair, and a host without ping says so."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from linkdeck.oses import ping_install
from linkdeck.present import report_text
from linkdeck.probe.hosts import run_pairs
from linkdeck.probe.matrix import outcome_json

JUMBO = {"mtu": 9000, "offload": False}


@pytest.fixture(scope="module")
def mtu_lab(request):
    from tests.conftest import _lab_missing
    from tests.lab import Lab

    reason = _lab_missing()
    if reason:
        pytest.skip(reason)
    with Lab({
        "a": {**JUMBO, "port_mtu": 1500}, "b": {**JUMBO, "port_mtu": 1500},
        "c": JUMBO, "d": JUMBO, "e": {"ping": False},
    }) as built:
        yield built


def _run(lab, pairs, seconds=3):
    settings = lab.settings()
    specs = {s.name: s for s in settings.hosts}
    outcomes, _ = asyncio.run(run_pairs(specs, settings, pairs, seconds))
    return outcomes


def test_jumbo_ends_over_a_1500_path_are_told_so_and_a_clean_pair_is_not(mtu_lab) -> None:
    blackhole, clean = _run(mtu_lab, [("a", "b"), ("c", "d")])
    print(report_text(blackhole), report_text(clean))
    doc = outcome_json(blackhole)
    assert doc["path_mtu"] == {"forward": 1500, "reverse": 1500}
    codes = [c["code"] for c in doc["causes"]]
    assert codes[0] == "PATH_MTU" and "DROPS" not in codes and "BOTTLENECK" not in codes
    first = doc["causes"][0]["message"]
    assert "1500" in first and "9000" in first and "both ends use 9000" in first
    assert doc["verdict"] == "bad" and blackhole.verdict.summary.startswith("the path carries 1500-byte packets")
    assert "Path MTU" in report_text(blackhole) and "a → b 1500 bytes" in report_text(blackhole)

    doc = outcome_json(clean)
    assert doc["path_mtu"] == {"forward": 9000, "reverse": 9000}
    assert "PATH_MTU" not in [c["code"] for c in doc["causes"]]
    assert doc["verdict"] != "error"


def test_a_host_without_ping_says_what_to_install(mtu_lab) -> None:
    (outcome,) = _run(mtu_lab, [("e", "c")], seconds=1)
    p = outcome.result.path_mtu
    hint = ping_install("linux", Path("/etc/os-release").read_text())
    assert p.forward is None and p.note == f"path MTU not probed: ping not found on e (`{hint}`)"
    assert p.reverse is not None  # c has a ping: it probes its own way
    assert outcome_json(outcome)["path_mtu"]["note"] == p.note
