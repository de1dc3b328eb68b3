"""`--witness`: the CloudWatch witness at the end of a headless run, before the embedded endpoint stops.

A run deletes its tables and stops its embedded endpoint when it quits; the endpoint's CloudWatch counters go with
it, so this is the way to witness a run on the embedded endpoint. The process waits until the run's last minute
has settled (`dynlocust.observe.witness.settle_until`), reads CloudWatch at the run's endpoint with the run's region
and credentials, prints the comparison and writes `witness.json` beside the results (the report shows it). A
witness that cannot read CloudWatch says why in one line; neither that nor a disagreement changes the run's exit
code, which says what the run did.
"""

from __future__ import annotations

import logging
import time

from locust.env import Environment

import gevent

from dynlocust.observe import witness
from dynlocust.plugin.context import settings_for, state_for
from dynlocust.plugin.epilogue import output
from dynlocust.request.transport.boto3 import is_local_endpoint, make_client
from dynlocust.run.results import read_results

log = logging.getLogger("dynlocust")


def run(environment: Environment) -> None:
    """Witness the current run, if `--witness` asked for it and it has results (called before the endpoint stops)."""
    settings = settings_for(environment)
    current = state_for(environment).run
    options = environment.parsed_options
    if not settings.witness or current is None or current.results_path is None or not current.results_path.exists():
        return
    if not getattr(options, "headless", False):
        return
    out = output(options)
    host = environment.host or None
    try:
        end = witness.run_tables(read_results(current.results_path)).end
        wait = witness.settle_until(end, local=is_local_endpoint(host)) - time.time()
        if wait > 0:
            log.info("witness: waiting %.0f s for the run's last minute to settle in CloudWatch", wait)
            gevent.sleep(wait)
        client = make_client(
            host, region=settings.region, connect_timeout=5.0, read_timeout=30.0, pool_size=1, service="cloudwatch"
        )
        text, _found = witness.witness(str(current.results_path), client)
    except witness.WitnessError as exc:
        print(f"dynlocust witness: {exc}", file=out, flush=True)
        return
    print(text, file=out, flush=True)
