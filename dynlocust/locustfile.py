"""The locustfile `dynlocust run` points Locust at; the logic lives in `dynlocust.hooks` (imported once)."""

from dynlocust.hooks import ScenarioUser

__all__ = ["ScenarioUser"]
