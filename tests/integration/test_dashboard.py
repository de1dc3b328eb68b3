"""docker/grafana/dashboards/dynlocust.json: valid for Grafana's dashboard model, one datasource input, the run,
instance and table variables applied to every query, and every PromQL expression parsed by Prometheus's promtool.

The model is grafana-foundation-sdk's, generated from Grafana's own dashboard schema: the dashboard is decoded into
its typed classes and encoded again, and nothing may be lost on the way (a key Grafana does not know is dropped).
A real Prometheus runs every query against a real run in tests/integration/test_prometheus.py.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.runs import ROOT

DASHBOARD = ROOT / "docker" / "grafana" / "dashboards" / "dynlocust.json"
DATASOURCE = {"type": "prometheus", "uid": "${DS_PROMETHEUS}"}
IMPORT_ONLY = {"__inputs", "__requires"}
"""Read by Grafana's import (which substitutes ${DS_PROMETHEUS}), not part of the dashboard model."""
PROMETHEUS_ANNOTATION_OPTIONS = {"step", "titleFormat", "textFormat", "tagKeys", "useValueForTime"}
"""Options the Prometheus data source reads from its annotation query itself; the dashboard schema leaves an
annotation's data-source options open, so the SDK's model has no field for them."""
TABLE_METRICS = (
    "dynlocust_requests_total",
    "dynlocust_throttled_requests_total",
    "dynlocust_unprocessed_items_total",
    "dynlocust_consumed_capacity_units_total",
    "dynlocust_request_duration_seconds_bucket",
)


def dashboard() -> dict[str, Any]:
    return json.loads(DASHBOARD.read_text())


def queries() -> list[tuple[str, str]]:
    """(where, PromQL) of every panel target and annotation."""
    board = dashboard()
    found = [(f"{p['title']} / {t['refId']}", t["expr"]) for p in board["panels"] for t in p["targets"]]
    return found + [(f"annotation {a['name']}", a["expr"]) for a in board["annotations"]["list"] if "expr" in a]


def lost(before: Any, after: Any, path: str = "") -> list[str]:
    """Paths in ``before`` whose value did not come back in ``after``."""
    if isinstance(before, dict):
        if not isinstance(after, dict):
            return [path]
        return [
            p for k, v in before.items() for p in (lost(v, after[k], f"{path}/{k}") if k in after else [f"{path}/{k}"])
        ]
    if isinstance(before, list):
        if not isinstance(after, list) or len(after) != len(before):
            return [path]
        return [p for i, (b, a) in enumerate(zip(before, after, strict=True)) for p in lost(b, a, f"{path}[{i}]")]
    return [] if before == after else [f"{path}: {before!r} -> {after!r}"]


def test_the_dashboard_decodes_into_grafanas_dashboard_model_without_loss() -> None:
    pytest.importorskip("grafana_foundation_sdk", reason="pip install grafana-foundation-sdk (dev extra)")
    from grafana_foundation_sdk.cog.encoder import JSONEncoder
    from grafana_foundation_sdk.cog.plugins import register_default_plugins
    from grafana_foundation_sdk.models import dashboard as model
    from grafana_foundation_sdk.models import prometheus, stat, timeseries

    register_default_plugins()
    board = dashboard()
    decoded = model.Dashboard.from_json({k: v for k, v in board.items() if k not in IMPORT_ONLY})
    again = json.loads(json.dumps(decoded, cls=JSONEncoder))
    annotations = range(len(board["annotations"]["list"]))
    allowed = {f"/annotations/list[{i}]/{k}" for i in annotations for k in PROMETHEUS_ANNOTATION_OPTIONS}
    missing = [p for p in lost(board, again) if p not in allowed and p.lstrip("/") not in IMPORT_ONLY]
    assert not missing, f"keys or values Grafana's dashboard model does not have: {missing}"
    # every panel and query went through its typed decoder, not the SDK's catch-all for unknown plugins
    options = {"timeseries": timeseries.Options, "stat": stat.Options}
    assert decoded.panels
    for panel in decoded.panels:
        assert isinstance(panel, model.Panel) and isinstance(panel.options, options[panel.type_val]), panel.title
        assert all(isinstance(t, prometheus.Dataquery) for t in panel.targets or []), panel.title
    assert [v.name for v in decoded.templating.list_val or []] == ["DS_PROMETHEUS", "run_id", "instance", "table"]


def test_one_datasource_input_and_no_hard_coded_uid() -> None:
    board = dashboard()
    (source,) = board["__inputs"]
    assert (source["name"], source["type"], source["pluginId"]) == ("DS_PROMETHEUS", "datasource", "prometheus")
    refs: list[Any] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "datasource" in node:
                refs.append(node["datasource"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk({k: v for k, v in board.items() if k != "templating"})
    walk([v for v in board["templating"]["list"] if v["type"] != "datasource"])
    assert refs and all(ref == DATASOURCE for ref in refs), [r for r in refs if r != DATASOURCE]
    # provisioned from a file, Grafana does not substitute inputs: a datasource variable of that name resolves it
    (variable,) = [v for v in board["templating"]["list"] if v["type"] == "datasource"]
    assert (variable["name"], variable["query"]) == ("DS_PROMETHEUS", "prometheus")
    provisioned = yaml.safe_load((ROOT / "docker/grafana/provisioning/datasources/prometheus.yml").read_text())
    assert provisioned["datasources"][0]["type"] == "prometheus"


def test_every_query_follows_the_run_instance_and_table_variables() -> None:
    variables = {v["name"]: v for v in dashboard()["templating"]["list"]}
    assert variables["run_id"]["query"]["query"] == "label_values(dynlocust_window_info, run_id)"
    assert variables["instance"]["query"]["query"] == 'label_values(dynlocust_window_info{run_id=~"$run_id"}, instance)'
    assert (
        variables["table"]["query"]["query"] == 'label_values(dynlocust_requests_total{instance=~"$instance"}, table)'
    )
    for where, expr in queries():
        assert '$run_id"' in expr and 'instance=~"$instance"' in expr, where
        for metric in re.findall(r"\b(dynlocust_\w+)\{([^}]*)\}", expr):
            if metric[0] in TABLE_METRICS:
                assert 'table=~"$table"' in metric[1], (where, metric)


def test_window_info_is_read_by_run_and_phase_only() -> None:
    """The window and its rate are gauges (dynlocust_window_index, dynlocust_target_rate), not info labels."""
    uses = [expr for _, expr in queries() if "dynlocust_window_info" in expr]
    assert uses
    for expr in uses:
        assert not re.search(r"\b(window|target_rate)\b(?!_)", expr.replace("dynlocust_window", "")), expr


def promql(expr: str) -> str:
    """A dashboard expression as Prometheus receives it: Grafana's variables substituted."""
    values = {"$__rate_interval": "1m", "$__interval": "15s", "$run_id": ".*", "$instance": ".*", "$table": ".*"}
    for name, value in values.items():
        expr = expr.replace(name, value)
    assert "$" not in expr, expr
    return expr


def test_every_query_is_promql_that_promtool_accepts(tmp_path: Path) -> None:
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("needs promtool (Debian package `prometheus`)")
    variables = [v["query"]["query"] for v in dashboard()["templating"]["list"] if v["type"] == "query"]
    selectors = [(f"variable {q}", re.fullmatch(r"label_values\((.*), \w+\)", q).group(1)) for q in variables]  # type: ignore[union-attr]
    rules = [
        {"record": f"dashboard:query_{i}", "expr": promql(expr)} for i, (_, expr) in enumerate(queries() + selectors)
    ]
    path = tmp_path / "dashboard-rules.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
    checked = subprocess.run([promtool, "check", "rules", str(path)], capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"SUCCESS: {len(rules)} rules found" in checked.stdout
