"""Bidirectional throughput tests between watched hosts (iperf3 over the hosts' runners).

- ``run_test(src, dst, address, duration, port)`` — one iperf3 test, no watching (iperf.py)
- ``run_watched(src, dst, address, duration, latest, …) -> Outcome`` — a test with both
  ends' counters and the verdict (watched.py)
- ``plan_pair`` / ``pick_address`` — which address to test (watched.py)
- ``run_matrix`` and the JSON/CSV exports (matrix.py)
- ``TestSession`` (plans and runs a pair, keeps each interface's last outcome), ``EndPool``
  (connections for iperf3) and ``Watch`` (a fleet for headless use) (hosts.py)
"""

from .failures import Iperf3Missing, PeerUnreachable, PortsBusy, ProbeError, TestTimeout
from .iperf import End, iperf3_info, run_test
from .pairs import Matrix, matrix_csv, matrix_json, ordered_pairs, outcome_json, run_matrix
from .watched import LOOPBACK, Outcome, pick_address, pick_route, plan_pair, run_watched

__all__ = [
    "End",
    "Iperf3Missing",
    "LOOPBACK",
    "Matrix",
    "Outcome",
    "PeerUnreachable",
    "PortsBusy",
    "ProbeError",
    "TestTimeout",
    "iperf3_info",
    "matrix_csv",
    "matrix_json",
    "ordered_pairs",
    "outcome_json",
    "pick_address",
    "pick_route",
    "plan_pair",
    "run_matrix",
    "run_test",
    "run_watched",
]
