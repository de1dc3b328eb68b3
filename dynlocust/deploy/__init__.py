"""Running dynlocust away from this machine: the ECS launcher (`ecs`) and the out-of-band results table."""
