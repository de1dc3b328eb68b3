"""The tables of the docs that restate a fact of the code, checked against it: the exit codes
(`dynlocust.exit_codes`), the layers (the import-linter `layers` contract), the metrics (what `/metrics` exposes)
and the options (what the plugin registers on Locust's parser). Each table follows an HTML comment that names it,
so a test finds it whatever the prose around it."""

from __future__ import annotations

import re
import tomllib

from prometheus_client import CollectorRegistry

from dynlocust.exit_codes import COMMAND_MEANINGS, MEANINGS, SEVERITY, ExitCode
from dynlocust.observe.metrics import Metrics
from dynlocust.plugin import settings
from tests.support.runs import ROOT


def marked_table(page: str, marker: str) -> list[list[str]]:
    """The cells of the Markdown table right after `<!-- marker -->` in docs/`page`, header and rule left out."""
    text = (ROOT / "docs" / page).read_text()
    assert f"<!-- {marker} -->\n" in text, f"docs/{page}: expected a table after <!-- {marker} -->"
    lines = text.split(f"<!-- {marker} -->\n", 1)[1].split("\n\n", 1)[0].splitlines()[2:]
    return [[cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]] for line in lines]


def test_the_exit_code_table_is_the_code_table() -> None:
    rows = [(int(code), words) for code, words in marked_table("verdicts.md", "exit-codes")]
    assert rows == [(int(code), words) for code, words in MEANINGS.items()]
    text = (ROOT / "docs" / "verdicts.md").read_text()
    ranks = re.search(r"unusable \(([\d, ]+)\) outranks what the numbers say \(([\d, ]+)\)", text)
    assert ranks, "docs/verdicts.md: expected the order of severity in words"
    written = [int(c) for c in f"{ranks[1]}, {ranks[2]}".split(", ")]
    assert written == [int(c) for c in SEVERITY if c != ExitCode.PASSED]


def test_the_layer_table_is_the_layers_contract() -> None:
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    (layers,) = [c["layers"] for c in contracts if c["type"] == "layers"]
    written = [row[0].replace("`", "").replace("\\|", "|") for row in marked_table("architecture.md", "layers")]
    assert written == layers


def test_the_metrics_table_is_what_metrics_exposes() -> None:
    text = Metrics(CollectorRegistry()).exposition().decode()
    types = dict(re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M))
    exposed = [(name, types[name], doc) for name, doc in re.findall(r"^# HELP (\S+) (.*)$", text, re.M)]
    written = [(n.strip("`"), t, d.replace("\\|", "|")) for n, t, d in marked_table("metrics.md", "metrics")]
    assert written == exposed


class OptionRecorder:
    """Stands in for Locust's parser: records what `settings.add_arguments` registers, in order."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, str, str]] = []

    def set_defaults(self, **_defaults: object) -> None:
        pass

    def add_argument(self, *names: str, **spec: object) -> None:
        help_text = str(spec.get("help", "")).replace("%%", "%")  # argparse's escape of a literal %
        self.rows.append((names[0], str(spec.get("env_var", "")), help_text))


def test_the_options_table_is_every_option_registered() -> None:
    recorder = OptionRecorder()
    settings.add_arguments(recorder)
    written = [(o.strip("`"), e.strip("`"), h.replace("\\|", "|")) for o, e, h in marked_table("options.md", "options")]
    assert len(recorder.rows) > 20 and written == recorder.rows


def test_the_command_exit_line_table_is_the_code_table() -> None:
    rows = [(cells[0].strip("`"), cells[1], cells[2]) for cells in marked_table("verdicts.md", "command-exit-lines")]
    assert rows == [(command, words[0], words[1]) for command, words in COMMAND_MEANINGS.items()]


def test_the_fleets_default_users_are_the_quickstarts_concurrency_on_its_default_workers() -> None:
    """docs/fleet.md and docker/compose.yaml said "the quickstart's 10 on 2 workers" after the quickstart went to 50."""
    from dynlocust.scenario import load_scenario

    concurrency = load_scenario(ROOT / "scenarios" / "quickstart.yaml").concurrency
    compose = (ROOT / "docker" / "compose.yaml").read_text()
    (workers,) = set(re.findall(r"\$\{WORKERS:-(\d+)\}", compose))
    users = {int(n) for n in re.findall(r"\$\{USERS:-(\d+)\}", compose)}
    assert users == {concurrency * int(workers)}
    said = f"{concurrency * int(workers)}, is the quickstart's {concurrency} x {workers}"
    assert f"(the default, {said})" in " ".join(compose.replace("#", " ").split())
    fleet = " ".join((ROOT / "docs" / "fleet.md").read_text().split())
    assert f"(default {concurrency * int(workers)}: the quickstart's {concurrency} on {workers} workers)" in fleet
    pod_master = next(line for line in fleet.split("$app --name master")[1:2])
    assert f"--expect-workers {workers} -u {concurrency * int(workers)} -r" in pod_master
