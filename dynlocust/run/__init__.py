"""One run's machinery: open-model pacing, the per-window tally and verdicts, saturation, SLOs, tables and results.

`LocalRun` (`local_run`) is one process's part of a run; windows are keyed by index from a shared T0, so the
fleet merges them exactly.
"""
