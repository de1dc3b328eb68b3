"""Locust's start form for dynlocust: defaults from the scenario, custom parameters validated and applied at Start.

Locust's `/swarm` handler copies each custom form field into `parsed_options` as a string and starts the runner;
dynlocust validates its options once, into `Settings`, so a form value would otherwise be accepted and ignored. Here a
Start goes through the command line's validation (the same one-line message, answered as Locust's `success: false`,
which the form shows), then the validated settings replace the process's before the run starts. A field the process
cannot apply at Start is not offered: the scenario (loaded once, when the process starts, the same file on every
worker), the deadline of a scenario run (the scenario's own), and in a fleet what each worker took from its own command
line. Before answering, one request checks that the endpoint answers and accepts the credentials, so those set-up
failures are refused in the form instead of leaving users idle.
"""

from __future__ import annotations

from argparse import Namespace
from collections.abc import Mapping
from contextlib import suppress
from pathlib import Path
from typing import Any

from dynlocust.errors import ConfigurationError
from dynlocust.plugin.settings import Settings, from_options
from dynlocust.request.transport.boto3 import endpoint_errors, make_client, validate_endpoint
from dynlocust.run.claim import results_taken_message

FIXED = frozenset({"scenario"})
"""Options set when the process starts: the scenario decides the endpoint, the tables and every worker's plan."""
CLIENT_SIDE = frozenset({"deadline", "connect_timeout", "read_timeout", "region", "pool_size"})
"""Options of the processes that send requests: a fleet's workers take them from their own command line."""
PREFLIGHT_TIMEOUT = 5.0
"""At most this long per socket operation for the check a Start makes before it answers."""


def not_offered(*, scenario_run: bool, fleet: bool) -> frozenset[str]:
    """The dynlocust options the form must not offer, because a Start could not apply them."""
    hidden = set(FIXED)
    if scenario_run:
        hidden.add("deadline")
    if fleet:
        hidden |= CLIENT_SIDE
    return frozenset(hidden)


def offered(extra_options: Mapping[str, Any], hidden: frozenset[str]) -> dict[str, Any]:
    """Locust's custom form fields, without those a Start could not apply."""
    return {key: value for key, value in extra_options.items() if key not in hidden}


def fill_defaults(options: Namespace, concurrency: int) -> None:
    """Users and spawn rate from the scenario, unless the command line gave a user count: every slot of concurrency is
    waiting when the first send is due (the users wait for T0, so they can all start at once). For the form's
    defaults, and for a run Locust starts itself (`--headless`, `--autostart`)."""
    if getattr(options, "num_users", None) is None:
        options.num_users = concurrency
        options.spawn_rate = concurrency


def validate(form: Mapping[str, str], options: Namespace, hidden: frozenset[str]) -> Settings:
    """The settings a Start asks for, validated as on the command line; `ConfigurationError` names the option."""
    current = vars(options)
    for key in sorted(hidden & form.keys()):
        if str(form[key]) != str(current.get(key)):
            raise ConfigurationError(
                f"--{key.replace('_', '-')}: set when the process starts, not from the web UI; expected "
                f"{current.get(key)!r}, found {form[key]!r}"
            )
    merged = Namespace(**{**current, **{k: v for k, v in form.items() if k in current and k not in hidden}})
    settings = from_options(merged)
    if form.get("host"):
        validate_endpoint(form["host"])
    if form.get("run_id"):
        existing = Path(settings.results_dir) / settings.run_id / "results.jsonl"
        if existing.exists():
            raise ConfigurationError(results_taken_message(existing))
    return settings


def check_host(host: str | None, *, local: bool) -> None:
    """A local scenario's requests must go to a local endpoint: a blank host would send them to AWS."""
    if local and not host:
        raise ConfigurationError(
            "--host: expected the endpoint of a local scenario (such as the embedded one the form showed), found none"
        )


def preflight(host: str | None, settings: Settings, region: str) -> None:
    """One request to the endpoint: raise `ConfigurationError` when it does not answer or refuses the credentials."""
    from botocore.exceptions import ClientError

    timeout = min(settings.connect_timeout, PREFLIGHT_TIMEOUT)
    # any other refusal (such as AccessDenied for ListTables) proves the endpoint answers and checks signatures
    with suppress(ClientError), endpoint_errors(host or f"DynamoDB in {region}", refusals=False):
        client = make_client(host, region=region, connect_timeout=timeout, read_timeout=PREFLIGHT_TIMEOUT, pool_size=1)
        client.list_tables(Limit=1)
