"""observe.metric_families: the collector describes every family a scrape shows, so a registry sees its names."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry

from dynlocust.observe import metrics as m
from dynlocust.observe.metric_families import Collector, families
from dynlocust.request.outcomes import classify
from dynlocust.run.search import CeilingSearch
from dynlocust.scenario.model import Search
from tests.unit.observe.test_metrics import fire, new_metrics, throttle


def test_describe_names_every_family_a_scrape_shows() -> None:
    metrics = new_metrics()
    fire(metrics, classify({}))
    fire(metrics, throttle())
    metrics.merge_report(m.Metrics(CollectorRegistry(), worker="w1").take_deltas())
    search = CeilingSearch(Search(start=100.0, window=30.0), burst=0.1, low=100.0, high=400.0)
    shown = [(f.name, f.type) for f in families(metrics.values, metrics.workers, search)]
    described = Collector(lambda: []).describe()
    assert [(f.name, f.type) for f in described] == shown
    assert len(shown) == len({name for name, _ in shown}) > 20


def test_a_second_collector_with_the_same_names_is_refused_by_the_registry() -> None:
    registry = CollectorRegistry()
    m.Metrics(registry)
    with pytest.raises(ValueError, match="Duplicated timeseries"):
        m.Metrics(registry)


def test_the_registry_is_a_required_argument() -> None:
    with pytest.raises(TypeError, match="registry"):
        m.Metrics()  # type: ignore[call-arg]
