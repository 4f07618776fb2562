"""The one exception every parser raises for output it cannot read."""


class ParseError(ValueError):
    """Output that does not look like what the command prints.

    The message names the command and, where it helps, the offending line, so the collector
    can show it on the host's row and the user can attach it to a bug report.
    """

    def __init__(self, command: str, message: str, line: str | None = None) -> None:
        self.command = command
        self.line = line
        text = f"{command}: {message}"
        if line is not None:
            text += f" (line: {line[:120]!r})"
        super().__init__(text)
