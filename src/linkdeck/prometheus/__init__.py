"""The fleet read from a Prometheus server: node_exporter's metrics turned into the same
HostUpdates the SSH path produces. Importing this package loads no HTTP client; ``source``
does, when a Prometheus URL is configured; its config section lives in ``prometheus_config``."""
