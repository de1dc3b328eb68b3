"""Run a scenario with plain Locust:

    locust -f locustfiles/scenario.py --scenario scenarios/quickstart.yaml --headless -u 10 -r 10

`dynlocust run scenarios/quickstart.yaml` does the same with the scenario's own concurrency. As a fleet:

    locust -f locustfiles/scenario.py --scenario FILE --master --headless --expect-workers 2 -u 20 -r 20
    locust -f locustfiles/scenario.py --scenario FILE --worker      # twice
"""

from dynlocust.user_classes.scenario_user import ScenarioUser

__all__ = ["ScenarioUser"]
