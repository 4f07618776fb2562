"""One module per command output: text in, dataclasses out. No I/O here."""

from .errors import ParseError

__all__ = ["ParseError"]
