"""Run a scenario with plain Locust:

    locust -f locustfiles/scenario.py --scenario scenarios/quickstart.yaml --headless -u 20 -r 20

`dynlocust run scenarios/quickstart.yaml` does the same with the scenario's own concurrency.
"""

from dynlocust.locustfile import ScenarioUser

__all__ = ["ScenarioUser"]
