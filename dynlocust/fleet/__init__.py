"""The fleet: the master's merge of every worker's windows, and the launchers that run a fleet away from here.

`merge` (`FleetMerge`: window reports from every worker merged exactly, then judged), the ECS launcher (`ecs`,
`fargate`) and the out-of-band results table (`results_table`). No Locust here: the roles in `plugin` drive it.
"""
