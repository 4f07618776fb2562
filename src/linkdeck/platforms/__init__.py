"""One adapter per OS family: which commands to run through a Runner, which parsers to apply."""
