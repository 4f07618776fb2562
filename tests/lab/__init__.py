"""The namespace lab (see /work/notes/LAB_API.md): ``from tests.lab import Lab, LabHost``."""

from .host import LabHost
from .lab import Lab
from .loopback import free_port, iperf3_pids, loopback_running, loopback_traffic
from .netns import LabError, cleanup_stale, scratch_namespaces
from .traffic import tcp_connects, udp_delivered
from .wait import until, wait_for, wait_until

__all__ = [
    "Lab",
    "LabError",
    "LabHost",
    "cleanup_stale",
    "free_port",
    "iperf3_pids",
    "loopback_running",
    "loopback_traffic",
    "scratch_namespaces",
    "tcp_connects",
    "udp_delivered",
    "until",
    "wait_for",
    "wait_until",
]
