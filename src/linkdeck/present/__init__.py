"""The words of a test's outcome, a diagnosis and each flow's limiter, for CLI and UI."""
