"""Every Locust listener dynlocust registers, in one place, in the order Locust fires them.

Each listener that depends on the process's place in a run hands the event to its role (`dynlocust.plugin.roles`),
which owns the run's life and registers its own role-specific listeners (metrics, fleet messages): start-up goes one
way, listeners, then roles, then what they call.

Two sets, each registered once however often it is asked for:
- `register_plugin`, for any locustfile with a dynlocust user (`dynlocust.user_classes.dynamodb_user` asks for
  it): the options, the process's role, its Prometheus metrics;
- `register_scenario`, for the scenario locustfile (`dynlocust.user_classes.scenario_user`): a scenario run's set-up,
  start, stop, shutdown and epilogue, after the plugin's own.

In firing order:
- `init_command_line_parser`: dynlocust's options;
- `init`: a worker forked by `--processes` watching its parent where the kernel cannot (`lifeline`), the settings
  and endpoint validated, the role created (`roles.create`: standalone, master or worker) with a `quitting`
  listener that hears shutdown before Locust's runner (`safety.hear_shutdown`), metrics wired by role and, with
  `--otel`, dynlocust's spans and instruments on Locust's OpenTelemetry providers (`otel_wiring`), the web UI's
  origin guard (`web_origin`: no other origin's page drives or reads it); for a
  scenario: Locust's misleading run-time hint dropped, a closed stdout tolerated, the DynamoDB tab when there is a
  web UI, credentials redacted from logs, interrupts (Ctrl-C and SIGTERM) routed, the role's fleet messages
  registered (before the scenario is prepared: workers say hello while a master starts its endpoint) and the
  scenario prepared;
- `test_start`: the role's `begin` (standalone or master: a fresh run set up and handed out; a worker waits for its
  plan);
- `test_stopping`: the role's stopping (a standalone web UI run closes its windows while Locust still says running);
- `test_stop`: the role's stop (the run ended, its tables deleted and, in the web UI, its report written; a worker
  stops its share);
- `quitting`: metrics stopped after a last scrape, then the run torn down and the embedded endpoint stopped, and
  Locust's statistics tables hidden when not one request was made;
- `quit`: OpenTelemetry's pending spans and metrics exported; the epilogue, with the process's exit code.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from locust import events
from locust.env import Environment
from locust.event import EventHook
from locust.web import WebUI

from dynlocust import redact
from dynlocust.errors import DynlocustError
from dynlocust.plugin import (
    console,
    epilogue,
    lifeline,
    otel_wiring,
    safety,
    settings,
    web_origin,
    webui,
)
from dynlocust.plugin.context import settings_for, state_for
from dynlocust.plugin.roles import begin, create, role_for
from dynlocust.request.transport.boto3 import validate_endpoint

_REGISTERED: set[str] = set()


def _once(name: str, listeners: list[tuple[EventHook, Callable[..., Any]]]) -> None:
    if name in _REGISTERED:
        return
    _REGISTERED.add(name)
    for hook, listener in listeners:
        hook.add_listener(listener)


def register_plugin() -> None:
    """What any dynlocust user needs: the first SIGTERM handled, options, the role, metrics."""
    lifeline.install_in_locust()
    _once(
        "plugin",
        [
            (events.init_command_line_parser, settings.add_arguments),
            (events.init, _link_to_parent),
            (events.init, _validate_settings),
            (events.init, _create_role),
            (events.init, _install_metrics),
            (events.init, _install_otel),
            (events.init, _guard_web_ui),
            (events.quitting, _uninstall_metrics),
            (events.quit, _flush_otel),
        ],
    )


def register_scenario() -> None:
    """A scenario run's life, after the plugin's own listeners."""
    register_plugin()
    _once(
        "scenario",
        [
            (events.init, console.drop_run_time_hint),
            (events.init, console.tolerate_closed_stdout),
            (events.init, _install_web_tab),
            (events.init, _prepare),
            (events.test_start, _begin),
            (events.test_stopping, _stopping),
            (events.test_stop, _stop),
            (events.quitting, _quitting),
            (events.quitting, console.hide_empty_tables),
            (events.quit, epilogue.on_quit),
        ],
    )


def _link_to_parent(environment: Environment, **_kwargs: Any) -> None:
    lifeline.watch_parent_if_unlinked()


def _validate_settings(environment: Environment, **_kwargs: Any) -> None:
    """Settings and the endpoint, validated before anything starts: a bad value ends the process (exit code 2)."""
    try:
        state_for(environment)
        if environment.host:
            validate_endpoint(environment.host)
    except DynlocustError as exc:
        sys.stderr.write(f"dynlocust: error: {exc}\n")
        sys.exit(exc.exit_code)


def _create_role(environment: Environment, **_kwargs: Any) -> None:
    state_for(environment).role = create(environment)
    # after the runner's own `quitting` listener (Locust fires `quitting` in reverse): this one hears first
    environment.events.quitting.add_listener(safety.hear_shutdown)


def _install_metrics(environment: Environment, **_kwargs: Any) -> None:
    role_for(environment).install_metrics()


def _uninstall_metrics(environment: Environment, **_kwargs: Any) -> None:
    role_for(environment).uninstall_metrics()


def _install_otel(environment: Environment, **_kwargs: Any) -> None:
    otel_wiring.install(environment)


def _flush_otel(**_kwargs: Any) -> None:
    otel_wiring.flush()


def _guard_web_ui(environment: Environment, web_ui: WebUI | None = None, **_kwargs: Any) -> None:
    if web_ui is not None and web_ui.app is not None:
        web_origin.install(web_ui.app, web_ui.host, settings_for(environment).web_origin)


def _install_web_tab(environment: Environment, web_ui: WebUI | None = None, **_kwargs: Any) -> None:
    if web_ui is not None:
        webui.install(environment, web_ui)


def _prepare(environment: Environment, **_kwargs: Any) -> None:
    redact.install()
    safety.route_interrupts()
    with safety.interrupts_held():  # a Ctrl-C here reaches Locust's main loop, which shuts down through `quitting`
        # the messages first: a master's `prepare` waits for its embedded endpoint, and workers say hello meanwhile
        role = role_for(environment)
        role.register()
        role.prepare()


def _begin(environment: Environment, **_kwargs: Any) -> None:
    begin(environment)


def _stopping(environment: Environment, **_kwargs: Any) -> None:
    role_for(environment).on_test_stopping()


def _stop(environment: Environment, **_kwargs: Any) -> None:
    role_for(environment).on_test_stop()


def _quitting(environment: Environment, **_kwargs: Any) -> None:
    role_for(environment).quit()
