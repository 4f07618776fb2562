"""`linkdeck report`: a real recording (tests over real SSH in the lab) as HTML rendered by a
real headless Chromium, whose screenshot must show drawn charts; Markdown; hostile names."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest
import zstandard
from markdown_it import MarkdownIt

from linkdeck.core import units
from linkdeck.recording.fileformat import read
from tests.builders import recording_file
from tests.cli import linkdeck
from tests.lab import loopback_running


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def screenshot(page: Path, png: Path, height: int = 2400) -> None:
    argv = [
        chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        f"--window-size=1200,{height}",
        f"--screenshot={png}",
        page.as_uri(),
    ]
    subprocess.run(argv, capture_output=True, timeout=120, check=True, env={**os.environ, "HOME": str(png.parent)})


def png_pixels(path: Path) -> tuple[int, int, list[bytes], int]:
    """(width, height, rows of RGB or RGBA bytes, bytes per pixel) of an 8-bit non-interlaced PNG, as Chromium
    writes."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and colour in (2, 6)
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, stride, rows, prev = zlib.decompress(idat), width * bpp, [], bytearray(width * bpp)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, rows, bpp


def reddish(path: Path) -> int:
    """Pixels of the rx line's red (pygal's first series, drawn translucent and anti-aliased)."""
    width, _, rows, bpp = png_pixels(path)
    n = 0
    for row in rows:
        for x in range(0, width * bpp, bpp):
            r, g, b = row[x], row[x + 1], row[x + 2]
            n += r > g + 50 and r > b + 50
    return n


@pytest.mark.lab
def test_report_of_a_lab_matrix_renders_in_chromium(lab, tmp_path) -> None:
    if chromium() is None:
        pytest.skip("no chromium on PATH (apt-get install chromium; scripts/test.sh does as root)")
    rec = tmp_path / "matrix.ldrec"
    out = linkdeck(
        "matrix", "h1", "h2", "--time", "4", "--record", str(rec), "--ssh-config", str(lab.ssh_config), timeout=120
    )
    assert out.returncode == 0, out.stderr
    out = linkdeck("report", str(rec), "-o", str(tmp_path / "report.html"))
    assert out.returncode == 0, out.stderr
    page = (tmp_path / "report.html").read_text()
    assert not re.search(r"""(src|href)=["']?https?:""", page)  # self-contained: nothing fetched
    assert page.count("<svg") >= 2  # h1/eth0 and h2/eth0 carried the tests
    assert page.count("class='verdict'") == 1 and "All-pairs matrix" in page  # one pair, tested both ways
    assert "h1 → h2" in page and "h2 → h1" in page
    png = tmp_path / "report.png"
    screenshot(tmp_path / "report.html", png)
    # the rx lines are drawn, through the translucent test shade: more red pixels than the
    # legends' swatches could account for even if they were drawn solid
    swatches = page.count("<svg") * 14 * 14
    assert reddish(png) > swatches


def test_markdown_report_of_a_local_ceiling(tmp_path) -> None:
    rec = tmp_path / "ceiling.ldrec"
    out = linkdeck("test", "local", "local", "--time", "1", "--record", str(rec), timeout=90)
    assert out.returncode == 0, out.stderr
    out = linkdeck("report", str(rec), "--markdown", "-o", "-")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert text.startswith("# linkdeck report") and "| lo | loopback | up |" in text
    assert re.search(r"^### \d\d:\d\d:\d\d local ceiling \(loopback\) .* — OK$", text, re.M)
    assert "<svg" not in text
    # TCP is said either way: measured over the samples a 1 s test spans, or, with a single
    # sample (no interval to measure over), why not
    assert re.search(
        r"^TCP: (\S+ (k )?segments/s sent on average|not reported \(this host's OS or source does not tell, "
        r"or no interval was measured\))",
        text,
        re.M,
    ), text


def test_a_report_gives_each_host_s_tcp_health_over_the_session(tmp_path) -> None:
    rec = tmp_path / "tcp.ldrec"
    with loopback_running():
        out = linkdeck("record", str(rec), "--duration", "3")
    assert out.returncode == 0, out.stderr
    text = linkdeck("report", str(rec), "--markdown", "-o", "-").stdout
    tcp = re.search(
        r"^TCP: (\S+) (k )?segments/s sent on average, (\S+)% retransmitted.*; "
        r"receive-buffer drops \S+/s; bad checksums \S+/s$",
        text,
        re.M,
    )
    assert tcp, text
    sent = float(tcp.group(1)) * (1000 if tcp.group(2) else 1)
    assert sent > 100  # the loopback transfer's segments (~50 MB/s of 64 KB writes)
    html_text = linkdeck("report", str(rec), "-o", "-").stdout
    assert "<p>TCP: " in html_text


def test_hostile_names_are_escaped(tmp_path) -> None:
    path = recording_file(
        tmp_path,
        [
            {
                "t": 100.0,
                "ev": "state",
                "h": "<img src=x onerror=alert(1)>\x1b[31m",
                "state": "unreachable",
                "error": "no",
            }
        ],
    )
    out = linkdeck("report", str(path), "-o", str(tmp_path / "r.html"))
    assert out.returncode == 0, out.stderr
    page = (tmp_path / "r.html").read_text()
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;\\x1b[31m" in page


def test_report_of_a_missing_file_is_one_line(tmp_path) -> None:
    out = linkdeck("report", str(tmp_path / "absent.ldrec"))
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "cannot open" in out.stderr


HOSTILE_HOST = "# **h** <b>x</b> ~~s~~ \\* [home](http://evil.example) &lt;"
HOSTILE_IFACE = "_l_`o`[x](http://evil.example)<i>#1|2\x1b"


def test_hostile_names_show_literally_in_markdown(tmp_path) -> None:
    out = linkdeck("record", str(tmp_path / "local.ldrec"), "--duration", "2")
    assert out.returncode == 0, out.stderr
    real = read(tmp_path / "local.ldrec")
    # constructed: the real recording with its host and its loopback renamed to hostile names
    rename = lambda d: {HOSTILE_IFACE if k == "lo" else k: v for k, v in d.items()}  # noqa: E731
    events = [
        {**e, "h": HOSTILE_HOST, **({"c": rename(e["c"])} if "c" in e else {})} if e.get("h") == "local" else e
        for e in real.events()
    ]
    header = {**real.header, "hosts": [dict(h, name=HOSTILE_HOST) for h in real.header["hosts"]]}
    path = tmp_path / "hostile.ldrec"
    path.write_bytes(
        zstandard.ZstdCompressor().compress("".join(json.dumps(e) + "\n" for e in [header, *events]).encode())
    )
    out = linkdeck("report", str(path), "--markdown", "-o", "-")
    assert out.returncode == 0, out.stderr
    page = MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(out.stdout)
    # nothing a name carried became markup: no emphasis, code, link, raw HTML, strikethrough
    assert not re.search(r"<(em|strong|code|a|b|i|s|del)\b", page)
    cell = html.escape(units.printable(HOSTILE_IFACE), quote=False)
    assert f"<td>{cell}</td>" in page and "\\x1b" in cell  # the whole name in one cell, escape kept visible
    assert f"<h2>{html.escape(HOSTILE_HOST, quote=False)} — " in page


def test_a_host_silent_at_the_recordings_end_is_stale_not_live(tmp_path) -> None:
    rec = tmp_path / "real.ldrec"
    assert linkdeck("record", str(rec), "--duration", "5").returncode == 0
    real = read(rec)
    events = list(real.events())
    last = float(events[-1]["t"])
    # constructed: the real recording with this machine's samples of its last 3.5 s taken out,
    # as when a host stops answering while the recording goes on
    kept = [e for e in events if e.get("h") != "local" or e["ev"] != "read" or float(e["t"]) < last - 3.5]
    assert len(kept) < len(events)
    path = tmp_path / "silent.ldrec"
    path.write_bytes(
        zstandard.ZstdCompressor().compress("".join(json.dumps(e) + "\n" for e in [real.header, *kept]).encode())
    )
    text = linkdeck("report", str(path), "--markdown", "-o", "-").stdout
    heading = next(line for line in text.splitlines() if line.startswith("## local"))
    assert "(stale, data as of " in heading and "live" not in heading, heading
    page = linkdeck("report", str(path), "-o", "-").stdout
    assert "— stale, data as of " in page and "— live" not in page
