"""Test package: makes ``tests.lab`` importable (``from tests.lab import Lab, LabHost``)."""
