"""The locustfile `dynlocust run` points Locust at; the logic lives in `dynlocust.plugin.scenario_user`."""

from dynlocust.plugin.scenario_user import ScenarioUser

__all__ = ["ScenarioUser"]
