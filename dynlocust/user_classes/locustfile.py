"""The locustfile `dynlocust run` points Locust at; the logic lives in `dynlocust.user_classes.scenario_user`."""

from dynlocust.user_classes.scenario_user import ScenarioUser

__all__ = ["ScenarioUser"]
