"""``linkdeck report FILE``: a recording as one self-contained HTML file with charts, or as
Markdown (``--markdown``) to paste into a ticket."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .recorded import open_recording, say_damage


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="a recording made by linkdeck record (or the dashboard's r)")
    parser.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="where to write it (default: FILE with .html, or .md with --markdown; - for stdout)",
    )
    parser.add_argument("--markdown", action="store_true", help="Markdown without charts, for a ticket")


def run(args: argparse.Namespace) -> int:
    from ..recording.timeline import build
    from .report_html import render_html, render_markdown

    recording = open_recording(args.file)
    if recording is None:
        return 2
    text = (render_markdown if args.markdown else render_html)(build(recording))
    say_damage(recording)
    out = args.output or str(Path(args.file).with_suffix(".md" if args.markdown else ".html"))
    if out == "-":
        sys.stdout.write(text)
        return 0
    try:
        Path(out).write_text(text, encoding="utf-8")
    except OSError as exc:
        print(f"linkdeck: cannot write {out}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"wrote {out}", file=sys.stderr)
    return 0
