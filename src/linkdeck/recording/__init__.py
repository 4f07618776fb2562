"""Recordings: a session's raw reads, host states, findings and tests in one file
(``fileformat``), written while linkdeck runs (``recorder``) and played back through the same
parsers (``replay``)."""
