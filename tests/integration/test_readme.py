"""The code blocks of README.md and of every docs/ page, run as written: every Python block is a locustfile run
against the endpoint the README starts (with the table it creates), every shell command either runs here (bounded:
ports made free, durations cut) or is listed with the reason it does not and the test that runs its like instead,
and every scenario block validates (and equals the shipped file it says it shows)."""

from __future__ import annotations

import csv
import re
import shlex
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.runs import ROOT

README = ROOT / "README.md"
PAGES = [README, *sorted(p for p in (ROOT / "docs").rglob("*.md") if "hooks" not in p.parts)]
"""The README first (its first example is the one the locustfile test starts from), then the site's pages."""
RUN = ("dynlocust scenarios", "dynlocust init ", "dynlocust validate ")
"""Commands run to completion here; each must exit 0."""
SERVE = "dynlocust local"
"""Servers: started on a free port, asked for their health, stopped."""
EXAMPLES = "locust -f writer.py"
"""Locust on the README's locustfiles: run on each Python block, for 3 s instead of 30."""
NOT_RUN = {
    "pip install": "installs from a registry; tests/integration/test_getting_started.py installs the built wheel",
    **dict.fromkeys(
        ("python3 -m venv .venv", ".venv/bin/pip install ", ". .venv/bin/activate"),
        "getting-started.md's install: test_getting_started.py follows it command by command from an empty directory",
    ),
    "make ": "make demo / make test: CI (.ci/run) runs the whole suite through them",
    "dynlocust run ": "a minute or more a run; test_getting_started.py runs the quickstart by name from the wheel, "
    "diff/test_diff_runs.py the CI recipe",
    "OTEL_EXPORTER_OTLP_ENDPOINT=": "needs an OTLP collector; tests/integration/test_otel.py runs the quickstart with "
    "--otel against a receiver in the test suite",
    "dynlocust witness ": "needs a run's results and CloudWatch; tests/integration/test_witness.py runs it after runs "
    "against a local endpoint",
    "dynlocust compare": "minutes of measurement; tests/integration/mapper/ runs compare",
    "dynlocust diff ": "needs earlier runs' results (results/main, $BASELINE); diff/test_diff_runs.py runs the recipe",
    "RUN_ID=": "the CI recipe's run id, from GitHub's variables; diff/test_diff_runs.py runs the recipe",
    "dynlocust ecs ": "needs AWS; tests/integration/launch/test_ecs.py runs the launcher against moto",
    "dynlocust ui ": "a web UI waiting for a browser; test_webui_live.py follows runs in one, test_getting_started.py "
    "serves it from the wheel",
    "locust -f locustfiles/scenario.py": "a fleet with placeholders (FILE, MASTER) or a web UI waiting for a browser; "
    "test_fleet.py and test_webui.py run them",
    "dynlocust k8s render ": "placeholders (IMAGE, ACCOUNT, ROLE); tests/unit/launch/test_kubernetes.py renders and "
    "checks every document, test_kubernetes_pod.py runs them under podman kube play",
    "kubectl ": "needs a Kubernetes cluster; the documents are checked against the client's models and run in a pod "
    "under podman (tests/unit/launch/test_kubernetes.py, test_kubernetes_pod.py)",
    "helm ": "needs a cluster and a chart repository; the values are checked against the chart's documented keys",
    "WORKERS=": "needs a Docker engine; test_docker_compose.py runs compose's commands as processes",
    ".venv/bin/python tests/benchmarks/": "measurements of seconds to minutes on a quiet machine, not tests; each "
    "prints ratios measured side by side (docs/benchmarks.md)",
    **dict.fromkeys(
        ("export CONTAINERS_CONF", "podman ", "docker/podman/", "echo ", "in_pod=", "app=", "S=", "$app ", "$in_pod ",
         "for i in", "done"),
        "root, podman and an image build; tests/integration/test_containers.py runs them",
    ),
}  # fmt: skip


def fences(page: Path | None = None) -> list[tuple[str, str]]:
    """(language, text) of every fenced block of `page`, or of every page."""
    pages = PAGES if page is None else [page]
    fence = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
    return [(m[1], m[2]) for p in pages for m in fence.finditer(p.read_text())]


def commands(text: str) -> list[str]:
    """The command lines of a shell block: continuations joined, comments and blank lines left out."""
    out = []
    for line in text.replace("\\\n", " ").splitlines():
        line = re.split(r"\s+# ", line, maxsplit=1)[0].strip()
        if line and not line.startswith(("#", "|")):
            out.append(line)
    return out


def shell_commands() -> list[str]:
    """Every page's shell command lines, each once."""
    return list(dict.fromkeys(c for lang, text in fences() if lang in ("", "sh") for c in commands(text)))


def python_blocks() -> list[str]:
    """Every page's Python blocks, each distinct one once (the README's example is also the users page's first)."""
    return list(dict.fromkeys(text for lang, text in fences() if lang == "python"))


def test_every_page_has_code_blocks_the_fences_find() -> None:
    # an indented fence (in a list or an admonition) would escape `fences()` and so these tests: none is allowed
    for page in PAGES:
        indented = [line for line in page.read_text().splitlines() if re.match(r"\s+```", line)]
        assert not indented, f"{page.relative_to(ROOT)}: indented code fences are not run by this test: {indented}"
    assert {p.name for p in PAGES} >= {"README.md", "getting-started.md", "users.md", "scenarios.md", "fleet.md"}
    assert all(fences(p) for p in (README, ROOT / "docs" / "users.md", ROOT / "docs" / "fleet.md"))


def executable(argv: list[str]) -> list[str]:
    """The venv's own `dynlocust` / `locust`, as an installed package puts them on PATH."""
    return [str(Path(sys.executable).with_name(argv[0])), *argv[1:]]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_every_readme_command_runs_here_or_says_why_not() -> None:
    found = shell_commands()
    assert any(c.startswith(RUN) for c in found) and any(c.startswith(SERVE) for c in found)
    unexplained = [c for c in found if not c.startswith((*RUN, SERVE, EXAMPLES, *NOT_RUN))]
    assert not unexplained, f"commands of the README or docs/ neither run by this test nor in NOT_RUN: {unexplained}"


@pytest.mark.parametrize("line", [c for c in shell_commands() if c.startswith(RUN)])
def test_a_readme_command_runs_as_written(line: str, tmp_path: Path) -> None:
    argv = shlex.split(line)
    cwd = ROOT if any(a.startswith("scenarios/") for a in argv) else tmp_path  # paths are the checkout's
    proc = subprocess.run(executable(argv), cwd=cwd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]


class Endpoint:
    """A README `dynlocust local ...` line, on a free port instead of 8000."""

    def __init__(self, line: str, tmp_path: Path) -> None:
        self.port = free_port()
        argv = shlex.split(line)
        argv = [str(self.port) if a == "8000" else a for a in argv]
        if "--port" not in argv:
            argv += ["--port", str(self.port)]
        ready = tmp_path / f"ready-{self.port}"
        self.log = tmp_path / f"endpoint-{self.port}.log"
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                executable([*argv, "--ready-file", str(ready)]), cwd=ROOT, stdout=log, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + 30
        while not ready.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise AssertionError(f"{line}: not listening within 30 s: {self.log.read_text()[-2000:]}")
            time.sleep(0.05)
        self.url = ready.read_text().strip()
        assert self.url == f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)


@pytest.fixture
def endpoints(tmp_path: Path) -> Iterator[list[Endpoint]]:
    started: list[Endpoint] = []
    try:
        yield started
    finally:
        for endpoint in started:
            endpoint.stop()


@pytest.mark.parametrize("line", [c for c in shell_commands() if c.startswith(SERVE)])
def test_a_readme_endpoint_command_serves(line: str, tmp_path: Path, endpoints: list[Endpoint]) -> None:
    endpoints.append(Endpoint(line, tmp_path))
    with urllib.request.urlopen(endpoints[-1].url + "/", timeout=5) as response:
        assert response.status == 200 and response.read().startswith(b"healthy")


@pytest.mark.slow
def test_every_readme_locustfile_runs_against_the_endpoint_the_readme_starts(
    tmp_path: Path, endpoints: list[Endpoint]
) -> None:
    # the first example and the two commands right after it: the endpoint (with its table), then Locust
    blocks = fences(README)
    first = next(i for i, (lang, _) in enumerate(blocks) if lang == "python")
    serve, run = commands(blocks[first + 1][1])
    assert serve.startswith(SERVE) and run.startswith(EXAMPLES)
    endpoints.append(Endpoint(serve, tmp_path))
    port = endpoints[-1].port
    examples = python_blocks()
    assert len(examples) >= 4  # DynamoDBUser, then the repository, PynamoDB and boto3 Table mappers
    for i, example in enumerate(examples):
        locustfile = tmp_path / f"example_{i}.py"
        locustfile.write_text(example)
        stats = tmp_path / f"example_{i}"
        argv = shlex.split(run.replace("writer.py", str(locustfile)).replace(":8000", f":{port}"))
        argv = ["3s" if a == "30s" else a for a in argv]  # bounded: the same run, shorter
        assert "3s" in argv and "--headless" in argv
        proc = subprocess.run(
            executable([*argv, "--csv", str(stats)]), cwd=tmp_path, capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 0, f"example {i}: {proc.stderr[-3000:]}"
        with open(f"{stats}_stats.csv", newline="") as f:
            rows = [row for row in csv.DictReader(f) if row["Name"] != "Aggregated"]
        assert rows, f"example {i} made no request"
        for row in rows:  # every request the example makes succeeded, on the table the endpoint created
            assert int(row["Request Count"]) > 0 and int(row["Failure Count"]) == 0, (i, row)


SHOWN_FILE = re.compile(r"^<!-- file: (\S+) -->\n```\w*\n(.*?)^```", re.S | re.M)


@pytest.mark.parametrize("page", [p for p in PAGES if SHOWN_FILE.search(p.read_text())], ids=lambda p: p.name)
def test_a_block_that_shows_a_file_shows_it_as_it_is(page: Path) -> None:
    for path, text in SHOWN_FILE.findall(page.read_text()):
        assert (ROOT / path).read_text() == text, f"{page.name}: the block after <!-- file: {path} --> differs"


SCENARIOS = [text for lang, text in fences() if lang == "yaml" and re.search(r"^phases:", text, re.M)]


@pytest.mark.parametrize("text", SCENARIOS, ids=lambda t: t.split("\n", 1)[0])
def test_a_scenario_block_validates(text: str, tmp_path: Path) -> None:
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(text)
    proc = subprocess.run(
        executable(["dynlocust", "validate", str(scenario)]), cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]


def test_the_docs_show_at_least_one_scenario() -> None:
    assert SCENARIOS


REPO_PATH = re.compile(r"`((?:dynlocust|tests|docker|scenarios|locustfiles)/[^`\s<]*)`")
"""A path of the checkout written in a page (up to a placeholder such as `<name>`)."""


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_path_a_page_names_exists(page: Path) -> None:
    named = {m.rstrip("/") for m in REPO_PATH.findall(page.read_text())}
    missing = sorted(p for p in named if not (ROOT / p).exists())
    assert not missing, f"{page.relative_to(ROOT)} names paths the checkout does not have: {missing}"
