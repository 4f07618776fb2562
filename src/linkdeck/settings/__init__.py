"""Settings, checked once where they come in: the config file, the command line, ranges."""
