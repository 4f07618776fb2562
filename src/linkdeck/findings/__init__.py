"""The rules behind the findings, one small module per family (pure functions).

``diagnose.Diagnoser`` feeds them: the static rules (speed, MTU) read the latest facts of every
host's interfaces, the window rules (counters, outlier) read the sliding window it keeps.
"""
