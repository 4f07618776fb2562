"""A host's busiest TCP flows: rates from two reads, each flow's limiter (``judge``), and the
report the flows screen and ``linkdeck flows`` show (``report``)."""
