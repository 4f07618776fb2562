"""One module per command output: text in, dataclasses out. No I/O here."""

from .parse_error import ParseError

__all__ = ["ParseError"]
