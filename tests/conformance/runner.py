"""Run moto's DynamoDB test suite in server mode against a real `dynlocust local`, and judge the outcome.

    python -m tests.conformance.runner [--moto-version 5.2.5] [-k EXPR] [--keep DIR] [--print-failures]

Steps: fetch moto's source distribution at the pinned version with pip (it ships tests/test_dynamodb/), start
`dynlocust local`, moto's own server and the router (tests/conformance/router.py) on 127.0.0.1 ephemeral ports,
run the suite with TEST_SERVER_MODE=true, then print passed/failed per file, overall, and for the tests moto
marks `aws_verified` (checked against the real service). Exit 0 only when the failures are exactly the ones in
expected_failures.txt: a failure outside the list fails the run, and so does a listed test that passes, so the
list only shrinks.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import logging
import os
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
MOTO_VERSION = "5.2.5"
SUITE = "tests/test_dynamodb"
EXPECTED = HERE / "expected_failures.txt"
EITHER = "[either outcome]"  # in a reason: the test may pass or fail (its expectation depends on chance)
# moto's unit tests of its own parser and models: no request reaches the endpoint, so they judge nothing here
NOT_ENDPOINT_TESTS = (
    "tests/test_dynamodb/models/",
    "tests/test_dynamodb/test_dynamodb_expression_tokenizer.py",
    "tests/test_dynamodb/test_dynamodb_expressions.py",
    "tests/test_dynamodb/test_dynamodb_utils.py",
    "tests/test_dynamodb/test_dynamodb_executor.py",
)
PYTEST_INI = """[pytest]
markers =
    network: requires network connection
    requires_docker: requires running docker
    aws_verified: Verified against AWS, and should be able to run against AWS
    requires_clean_slate: requires a clean slate, so no parallel testing
filterwarnings = ignore::DeprecationWarning
"""


@dataclass(frozen=True)
class Result:
    nodeid: str
    outcome: str  # passed | failed | skipped
    verified: bool
    message: str

    @property
    def file(self) -> str:
        return self.nodeid.split("::", 1)[0]


def load_expected(path: Path = EXPECTED) -> dict[str, str]:
    """`nodeid | reason` per line; blank lines and `#` comments ignored."""
    out: dict[str, str] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        nodeid, sep, reason = line.partition(" | ")
        if not sep or not reason.strip():
            raise SystemExit(f"{path}:{n}: expected '<test id> | <reason>', found {line!r}")
        out[nodeid.strip()] = reason.strip()
    return out


def fetch_suite(version: str, workdir: Path) -> Path:
    """pip-download moto's sdist and extract its tests/ tree (not its moto/ package) into `workdir`."""
    dl = workdir / "sdist"
    pip = [sys.executable, "-m", "pip", "download", "-q", "--no-binary", ":all:", "--no-deps"]
    subprocess.run(
        [*pip, "-d", str(dl), f"moto=={version}"],
        check=True,
        timeout=600,
    )
    (archive,) = dl.glob("moto-*.tar.gz")
    prefix = f"moto-{version}/"
    with tarfile.open(archive) as tar:
        members = []
        for m in tar.getmembers():
            if m.name.startswith(prefix + "tests/"):
                m.name = m.name[len(prefix) :]
                members.append(m)
        tar.extractall(workdir, members=members, filter="data")
    (workdir / "pytest.ini").write_text(PYTEST_INI, encoding="utf-8")
    return workdir


def moto_path(version: str, workdir: Path) -> str:
    """A PYTHONPATH entry with moto at `version`: none when the installed moto already is that version."""
    if importlib.metadata.version("moto") == version:
        return ""
    target = workdir / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), f"moto=={version}"],
        check=True,
        timeout=600,
    )
    return str(target)


def run_suite(workdir: Path, extra_path: str, pytest_args: list[str], timeout: float) -> list[Result]:
    sys.path.insert(0, str(ROOT))
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's server logs every request otherwise
    if extra_path:
        sys.path.insert(0, extra_path)
    from moto.moto_server.threaded_moto_server import ThreadedMotoServer

    from tests.conformance.router import Router
    from tests.support.processes import ServerProcess

    # no capacity emulation: moto's suite does not model throughput, and its bursts on 1-unit tables would be
    # throttled (correctly) by the capacity model, which has its own tests
    dynlocust = ServerProcess("dynlocust.local", "--port", "0", "--no-capacity")
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    moto.start()
    host, port = moto.get_host_and_port()
    router = Router(dynlocust.url, f"http://{host}:{port}")
    router.start()
    out = workdir / "results.jsonl"
    env = {
        **os.environ,
        "TEST_SERVER_MODE": "true",
        "TEST_SERVER_MODE_ENDPOINT": router.url,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "DYNLOCUST_CONFORMANCE_OUT": str(out),
        "PYTHONPATH": os.pathsep.join(p for p in (extra_path, str(HERE), str(workdir)) if p),
    }
    env.pop("MOTO_TEST_ALLOW_AWS_REQUEST", None)
    ignore = [f"--ignore={p}" for p in NOT_ENDPOINT_TESTS]
    try:
        pytest = [sys.executable, "-m", "pytest", SUITE, "-p", "plugin", "-p", "no:cacheprovider", "-q"]
        subprocess.run(
            [*pytest, "--tb=short", "-o", "addopts=", "--timeout=60", "--durations=15", *ignore, *pytest_args],
            cwd=workdir,
            env=env,
            stdout=open(workdir / "pytest.log", "w"),  # noqa: SIM115 - closed with the process
            stderr=subprocess.STDOUT,
            timeout=timeout,
            check=False,
        )
    finally:
        router.stop()
        moto.stop()
        dynlocust.stop()
    if not out.exists():
        raise SystemExit(f"the suite wrote no results; see {workdir / 'pytest.log'}")
    return [Result(**json.loads(line)) for line in out.read_text(encoding="utf-8").splitlines()]


def report(results: list[Result], expected: dict[str, str], selected: bool) -> int:
    """Print the tables; return the number of surprises (unlisted failures, listed passes, stale entries)."""
    ran = [r for r in results if r.outcome != "skipped"]
    out_of_scope = {n for n, why in expected.items() if why.startswith("out of scope")}
    per_file: dict[str, Counter[str]] = {}
    for r in ran:
        per_file.setdefault(r.file, Counter())[r.outcome] += 1
    print(f"{'file':<66} {'passed':>6} {'failed':>6}")
    for f in sorted(per_file):
        c = per_file[f]
        print(f"{f:<66} {c['passed']:>6} {c['failed']:>6}")

    def line(label: str, rows: list[Result]) -> None:
        p = sum(r.outcome == "passed" for r in rows)
        pct = 100.0 * p / len(rows) if rows else 100.0
        print(f"{label:<40} {p:>4} / {len(rows):<4} passed ({pct:.1f}%)")

    print()
    line("overall", ran)
    line("aws_verified", [r for r in ran if r.verified])
    line("in scope", [r for r in ran if r.nodeid not in out_of_scope])
    line("in scope, aws_verified", [r for r in ran if r.verified and r.nodeid not in out_of_scope])
    judged = {n for n, why in expected.items() if why.startswith("moto differs")} | out_of_scope
    line("in scope, where moto agrees with AWS", [r for r in ran if r.nodeid not in judged])
    print(f"skipped by moto in server mode: {sum(r.outcome == 'skipped' for r in results)}")

    outcome = {r.nodeid: r.outcome for r in results}
    unexpected = [r for r in ran if r.outcome == "failed" and r.nodeid not in expected]
    fixed = [n for n in expected if outcome.get(n) == "passed" and EITHER not in expected[n]]
    stale = [] if selected else [n for n in expected if n not in outcome]
    for r in unexpected:
        print(f"UNEXPECTED FAILURE {r.nodeid}: {r.message}")
    for n in fixed:
        print(f"NOW PASSES (remove it from {EXPECTED.name}) {n}")
    for n in stale:
        print(f"NOT RUN (remove it from {EXPECTED.name}) {n}")
    return len(unexpected) + len(fixed) + len(stale)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.conformance.runner", description=__doc__.split("\n")[0])
    p.add_argument("--moto-version", default=MOTO_VERSION, help=f"moto sdist to take the suite from ({MOTO_VERSION})")
    p.add_argument("-k", dest="keyword", help="run only the tests matching this pytest -k expression")
    p.add_argument("--keep", help="work in this directory and keep it (default: a temporary one, removed)")
    p.add_argument("--print-failures", action="store_true", help="print every failure with its first error line")
    p.add_argument("--timeout", type=float, default=900, help="seconds the whole suite may take (900)")
    args = p.parse_args(argv)
    expected = load_expected()
    with tempfile.TemporaryDirectory(prefix="dynlocust-conformance-") as tmp:
        workdir = Path(args.keep) if args.keep else Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        if not (workdir / SUITE).is_dir():
            fetch_suite(args.moto_version, workdir)
        extra = moto_path(args.moto_version, workdir)
        results = run_suite(workdir, extra, ["-k", args.keyword] if args.keyword else [], args.timeout)
        if args.print_failures:
            for r in results:
                if r.outcome == "failed":
                    print(f"FAILED {r.nodeid}: {r.message}")
        surprises = report(results, expected, selected=bool(args.keyword))
    return 1 if surprises else 0


if __name__ == "__main__":
    sys.exit(main())
