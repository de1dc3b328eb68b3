"""The launchers that run a fleet away from here: ECS on Fargate (`ecs`, `ecs_resources`, `fargate`, the
CloudFormation template) and Kubernetes (`kubernetes`, `kubernetes_checks`). Only `dynlocust.cli` imports them.
"""
