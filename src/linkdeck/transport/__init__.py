"""Runners: the one way adapters reach a host, local or over SSH."""
