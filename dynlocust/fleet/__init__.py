"""The fleet's merge: the master's view of every worker's windows, merged exactly, judged once, written out.

`merge` (`FleetMerge`), `judge` (`WindowJudge`), `exit_code`, `output` and the out-of-band results table
(`results_table`). No Locust here: the roles in `plugin` drive it. The launchers live in `dynlocust.launch`.
"""
