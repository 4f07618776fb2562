"""Every benchmark in bench/ still runs: each one's ``--smoke`` mode (a few seconds, tiny sizes)
as a subprocess, checked for the figures it exists to print. An API change that breaks a
benchmark fails here instead of on the day someone needs its numbers (bench_ssh.py once failed
at import for weeks). The lab's benchmarks build namespaces, so they run where the lab tests do.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
NUM = r"[0-9]+(?:\.[0-9]+)?"

# benchmark → (needs the namespace lab, patterns its smoke output must hold: the figures)
FIGURES: dict[str, tuple[bool, tuple[str, ...]]] = {
    "bench_backlog.py": (False, (
        rf"^  one message per update \(before\)\s+12 waiting\s+{NUM} MB held\s+{NUM} s CPU to the newest$",
        rf"^  inbox \(a waiting update replaced\)\s+3 waiting\s+{NUM} MB held\s+{NUM} s CPU to the newest$",
        rf"^inbox / before: waiting x0\.250, held x{NUM}, CPU x{NUM}$",
    )),
    "bench_findings.py": (False, (
        rf"^healthy\s+0\s+{NUM} ms\s+{NUM} ms$",
        rf"^errors rising\s+[1-9][0-9]*\s+{NUM} ms\s+{NUM} ms$",
    )),
    "bench_parsers.py": (False, (
        rf"^proc_net_dev:.*\s5\s+0\s+{NUM}\s+{NUM}$",
        r"^escaped exceptions in all: 0$",
    )),
    "bench_prometheus.py": (False, (
        rf"^\s+20\s+{NUM}MB\s+{NUM}s\s+{NUM}s\s+{NUM}s\s+{NUM}%\s+{NUM}s\s+{NUM}x\s+{NUM}MB\s+{NUM}s\s+{NUM}s\s+{NUM}s\s+{NUM}s$",
        rf"^\s+the cyclic collector tracks [\d,]+ objects; one full collection {NUM}s \({NUM}s CPU\)$",
    )),
    "bench_ui.py": (False, (
        rf"^\s+8\s+{NUM}%\s+{NUM}%\s+{NUM}x\s+{NUM}%\s+{NUM}x\s+{NUM}%\s+{NUM} MB\s+{NUM} MB$",
        rf"^  collector \+ recorder\s+{NUM}% CPU",
        rf"^  the recorder alone: {NUM} µs per host-sample",
        rf"^  ratio {NUM}x",
        rf"^80x24 / 200x60: CPU {NUM}x, render_line {NUM}x",
        rf"^  idle folded \(default\)\s+{NUM}% CPU\s+{NUM} MB\s+\d+ rows",
        rf"^  folded / every row: CPU {NUM}x",
    )),
    "bench_recording.py": (False, (
        rf"^checkpoints every {NUM} s: {NUM} MB against {NUM} MB without \([+-]{NUM} %",
        rf"^file {NUM} MB = {NUM} B per host-sample; decompressing it once \(the floor\) {NUM} s CPU$",
        rf"^report\s+cpu\s+{NUM} s\s+wall\s+{NUM} s\s+peak RSS\s+{NUM} MB",
        rf"^snapshot --at 90s\s+cpu\s+{NUM} s\s+wall\s+{NUM} s\s+peak RSS\s+{NUM} MB\s+\(2/2 hosts live",
        rf"^replay g 157s\s+cpu\s+{NUM} s\s+wall\s+{NUM} s\s+\([1-9][0-9]* interface rows",
    )),
    "bench_tcp.py": (False, (
        rf"^tick frame: {NUM} B with TCP, {NUM} B without: [+-]{NUM} B per sample \(the tcp line: {NUM} B\)$",
        rf"^sampler CPU per tick: {NUM} ms with TCP, {NUM} ms without \(x{NUM}\)$",
        rf"^script: {NUM} B with TCP, {NUM} B without",
    )),
    "bench_ssh.py": (True, (
        rf"^stream\s+hosts=2 .* remote=\s*{NUM} ms cpu/sample \(sampler\s+{NUM} ms, "
        rf"{NUM}% of a core at 1 Hz\)\s+wire=\s*{NUM} B/sample \(frame\s+{NUM}\)",
        r"^exec-per-poll\s+hosts=4 .* samples=[1-9]",
        rf"^exec-per-poll / stream at 4 connections: cpu x{NUM}, remote x{NUM}, wire x{NUM}$",
        rf"^bare paramiko cat loop\s+hosts=2 .* samples=[1-9].* wire=\s*{NUM} B/sample",
        rf"^stream, 602-link node\s+hosts=1 .* samples=[1-9].* wire=\s*{NUM} B/sample \(frame\s+{NUM}\)",
        rf"^linkdeck / bare paramiko cat loop, 2 hosts of 5 links: client cpu x{NUM} \({NUM}% vs {NUM}% of a core\), "
        rf"remote cpu/sample x{NUM}, wire x{NUM}$",
        r"^linkdeck / bare paramiko cat loop, 4 connections to hosts of 5 links: "
        rf"client cpu x{NUM} \({NUM}% vs {NUM}% of a core\)",
        r"^bare paramiko cat loop\s+hosts=4 .* samples=[1-9]",
        rf"^linkdeck / bare paramiko cat loop, the 602-link node: client cpu x{NUM}",
        rf"^22-link node, sampler alone .* ordinary tick {NUM} ms, slow-facts frame {NUM} ms, "
        rf"full frame {NUM} ms .* {NUM} ms a sample = {NUM}% of a core$",
    )),
    "bench_transport.py": (True, (
        rf"^bare ssh cat loop\s+hosts=2\s+cpu=\s*{NUM}% of a core \(ssh\s+{NUM}%\)\s+samples=[1-9][0-9]*\s+"
        rf"missed=\d+\s+all live\s+{NUM} s\s+"
        rf"rss_growth=[+-]{NUM} MB/host\s+ssh_pss=[1-9][0-9.]* MB/host$",
        rf"^linkdeck over openssh\s+hosts=2\s+cpu=\s*{NUM}% of a core \(ssh\s+{NUM}%\)\s+samples=[1-9][0-9]*\s+"
        rf"missed=\d+\s+all live\s+{NUM} s\s+"
        rf"rss_growth=[+-]{NUM} MB/host\s+ssh_pss=[1-9][0-9.]* MB/host$",
        rf"^linkdeck over paramiko\s+hosts=2\s+cpu=\s*{NUM}% of a core \(ssh\s+{NUM}%\)\s+samples=[1-9][0-9]*\s+"
        rf"missed=\d+\s+all live\s+{NUM} s\s+"
        rf"rss_growth=[+-]{NUM} MB/host\s+ssh_pss=0\.00 MB/host$",
        rf"^bare paramiko cat loop\s+hosts=2\s+cpu=\s*{NUM}% of a core \(ssh\s+{NUM}%\)\s+samples=[1-9][0-9]*",
        rf"^  event loop's longest stall until all live: {NUM} s$",
        # the floors' loops outlive their sessions and are ended; linkdeck leaves nothing
        r"^  hosts after bare ssh cat loop: 2 loops ended, 0 other processes left$",
        r"^  hosts after linkdeck over openssh: 0 loops ended, 0 other processes left$",
        r"^  hosts after linkdeck over paramiko: 0 loops ended, 0 other processes left$",
        r"^  hosts after bare paramiko cat loop: 2 loops ended, 0 other processes left$",
        rf"^OpenSSH rounds, linkdeck / floor: cpu x{NUM} x{NUM}; all live {NUM} {NUM} s against {NUM} {NUM} s; "
        r"the median round below$",
        rf"^linkdeck over openssh / bare ssh cat loop: cpu x{NUM} "
        rf"\({NUM}% vs {NUM}% of a core; goal x1\.0: (met|missed)\)$",
        rf"^linkdeck over paramiko / bare paramiko cat loop: cpu x{NUM} \({NUM}% vs {NUM}% of a core\)$",
        rf"^openssh / paramiko: cpu x{NUM}, all live x{NUM}; "
        rf"memory per host {NUM} MB \(ssh processes {NUM}\) vs -?{NUM} MB$",
        rf"^linkdeck over openssh: all 2 live in {NUM} s, the median of 2 rounds \(goal 3 s: (met|missed)\)$",
    )),
    "bench_idle.py": (True, (
        rf"^4 idle nodes\s+{NUM}\s+\({NUM}–{NUM}\)\s+{NUM}\s+\({NUM}–{NUM}\)\s+"
        rf"{NUM}\s+\({NUM}–{NUM}\)\s+{NUM}\s+[1-9][0-9]*$",
        rf"^4 nodes, one veth busy\s+{NUM}\s+\({NUM}–{NUM}\)\s+{NUM}\s+\({NUM}–{NUM}\)\s+"
        rf"{NUM}\s+\({NUM}–{NUM}\)\s+{NUM}\s+[1-9][0-9]*  busy veth on screen [1-9]",
        r"^goals: 4 idle nodes <= 3 %",
    )),
    "bench_record.py": (True, (
        r"^host-samples recorded\s+[1-9][0-9]*$",
        rf"^file \(zstd, level \d+\)\s+\d+ B = {NUM} B per host-sample",
        rf"^20 hosts x 8 h at 1 Hz\s+{NUM} MB",
    )),
    "bench_probe.py": (True, (
        rf"^cold\s+{NUM}s\s+{NUM}s\s+{NUM}s\s+{NUM}s",
        rf"verdict \(with counters\) on screen {NUM} s",
    )),
    "bench_live.py": (True, (
        rf"^iperf3 3\.21 \(--json-stream\)\s+first second on screen\s+median {NUM} s\s+max {NUM} s",
        rf"^  Esc → both iperf3 gone  median {NUM} s$",
        rf"^ratio reference / live first figure {NUM}x$",
    )),
    "bench_flows.py": (True, (
        rf"^\s+10 sockets  flows command:\s+{NUM} ms cpu/round\s+{NUM} B/round \(10 of 1[0-9] flows\)",
        rf"^\s+200 sockets  flows command:\s+{NUM} ms cpu/round\s+"
        rf"{NUM} B/round \(10 of 20[0-9] flows\).*ratio cpu x{NUM}, bytes x0\.",
        rf"^dashboard CPU .* flows screen closed {NUM}%, open {NUM}% of one core \(x{NUM}; [1-9][0-9]* rounds shown\)$",
    )),
    "bench_diagnose.py": (True, (
        rf"^linkdeck test\s+wall median {NUM} s\s+max {NUM} s$",
        rf"^linkdeck diagnose\s+wall median {NUM} s\s+max {NUM} s\s+\(ok: nothing wrong",
        rf"^ratio diagnose / test {NUM}x; goal t x 2 \+ 2 = {NUM} s: (met|missed)$",
    )),
    "bench_pmtu.py": (True, (
        rf"^clean 9000\s+median {NUM} s\s+max {NUM} s\s+forward",
        rf"^clean 1500\s+probe {NUM} s of {NUM} s start → verdict",
        rf"verdict \(with counters\) on screen {NUM} s",
    )),
    "bench_soak.py": (True, (
        rf"^t=\s*{NUM} min  RSS\s+{NUM} MB  measured  \(thread arenas {NUM} MB\)$",
        rf"^slope after warm-up [+-]{NUM} MB/hour over {NUM} min \([1-9][0-9]* samples; "
        rf"first half [+-]{NUM}, second half [+-]{NUM} MB/hour\)$",
        rf"^tracemalloc net growth: [+-]{NUM} KiB$",
        rf"slope of glibc's thread arenas [+-]{NUM} MB/hour, of the rest [+-]{NUM} MB/hour$",
        r"^child: 2/2 hosts with interfaces at the end",
    )),
}  # fmt: skip


# lab benchmarks that need the iperf3 3.21 scripts/test.sh builds (they skip with its reason)
NEEDS_NEW_IPERF3 = {"bench_live.py"}


def test_every_benchmark_has_a_smoke_check():
    assert sorted(p.name for p in BENCH.glob("*.py")) == sorted(FIGURES)


@pytest.mark.parametrize(
    "name", [pytest.param(name, marks=[pytest.mark.lab] if lab else []) for name, (lab, _) in FIGURES.items()]
)
def test_benchmark_smoke(name, request):
    lab, patterns = FIGURES[name]
    if lab:
        request.getfixturevalue("require_new_iperf3" if name in NEEDS_NEW_IPERF3 else "require_root")
    out = subprocess.run(
        [sys.executable, str(BENCH / name), "--smoke"], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    missing = [p for p in patterns if not re.search(p, out.stdout, re.MULTILINE)]
    assert not missing, f"{name} --smoke did not print {missing}:\n{out.stdout[-3000:]}"
