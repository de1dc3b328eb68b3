"""`python -m dynlocust.local`: serve the local DynamoDB-compatible endpoint until SIGINT/SIGTERM (or, with
`--exit-with-parent`, until its parent has gone)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from dynlocust.dynamodb import JSON_CONTENT_TYPE
from dynlocust.errors import DynlocustError
from dynlocust.exit_codes import ExitCode
from dynlocust.local.config import LocalConfig

ENV_KEY_ID = "DYNLOCUST_LOCAL_ACCESS_KEY_ID"
ENV_SECRET = "DYNLOCUST_LOCAL_SECRET_ACCESS_KEY"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def _non_negative(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, found {text!r}") from None
    if v < 0 or v != v:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, found {text!r}")
    return v


def _positive(text: str) -> float:
    v = _non_negative(text)
    if v == 0:
        raise argparse.ArgumentTypeError(f"expected a number > 0, found {text!r}")
    return v


def _port(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port 0-65535, found {text!r}") from None
    if not 0 <= v <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port 0-65535, found {text!r}")
    return v


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number > 0, found {text!r}") from None
    if v <= 0:
        raise argparse.ArgumentTypeError(f"expected a whole number > 0, found {text!r}")
    return v


def _table_spec(text: str) -> tuple[str, ...]:
    parts = tuple(text.split(":"))
    if not 2 <= len(parts) <= 3 or not all(parts):
        raise argparse.ArgumentTypeError(
            f"expected NAME:PARTITION_KEY or NAME:PARTITION_KEY:SORT_KEY (e.g. orders:pk:sk), found {text!r}"
        )
    return parts


def create_tables(server: Any, specs: Sequence[tuple[str, ...]]) -> None:
    """Create each `--table` through the endpoint's own CreateTable, before it listens (so unsigned even with
    --verify-signatures: no client is connected yet); a refused one is a `DynlocustError` naming the option."""
    import orjson

    from dynlocust.local.server import TARGET_PREFIX

    verifier, server.verifier = server.verifier, None
    try:
        for name, *keys in specs:
            request = {
                "TableName": name,
                "BillingMode": "PAY_PER_REQUEST",
                "AttributeDefinitions": [{"AttributeName": k, "AttributeType": "S"} for k in keys],
                "KeySchema": [
                    {"AttributeName": k, "KeyType": t} for k, t in zip(keys, ("HASH", "RANGE"), strict=False)
                ],
            }
            headers = {"x-amz-target": f"{TARGET_PREFIX}CreateTable", "content-type": JSON_CONTENT_TYPE}
            response = server.handle_request("POST", "/", headers, orjson.dumps(request))
            head, _, body = response.partition(b"\r\n\r\n")
            if not head.startswith(b"HTTP/1.1 200"):
                found = orjson.loads(body).get("message", body.decode(errors="replace")) if body else head.decode()
                raise DynlocustError(f"--table {':'.join([name, *keys])}: expected the table created, found {found}")
    finally:
        server.verifier = verifier


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="dynlocust local", description="Serve a local DynamoDB-compatible endpoint.")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=_port, default=8000, help="port to bind, 0 = ephemeral (default 8000)")
    p.add_argument("--region", default="us-east-1", help="region used in ARNs (default us-east-1)")
    p.add_argument("--create-delay", type=_non_negative, default=0.0, help="seconds a new table stays CREATING")
    p.add_argument(
        "--verify-signatures",
        action="store_true",
        help=f"verify SigV4; accepted credentials come from ${ENV_KEY_ID} / ${ENV_SECRET}",
    )
    p.add_argument("--no-capacity", action="store_true", help="no capacity emulation: never throttle")
    p.add_argument(
        "--scenario",
        help="take --capacity-scale and --time-scale from this scenario's target.local (the options still override)",
    )
    p.add_argument("--capacity-scale", type=_positive, help="multiply every capacity limit (default 1)")
    p.add_argument("--time-scale", type=_positive, help="speed up capacity time (burst, growth) (default 1)")
    p.add_argument("--latency-model", action="store_true", help="add in-region-like latency (p50 ~4.5 ms)")
    p.add_argument("--ready-file", help="write the bound URL to this file once listening")
    p.add_argument(
        "--exit-with-parent",
        action="store_true",
        help="stop when stdin reaches its end (its parent holds the other end of a pipe: the endpoint then stops "
        "when its parent does, however the parent ends, also from a session of its own)",
    )
    p.add_argument(
        "--table",
        action="append",
        type=_table_spec,
        default=[],
        metavar="NAME:PK[:SK]",
        help="create this on-demand table (string keys) before listening, e.g. orders:pk:sk; repeatable",
    )
    d = LocalConfig()
    limits = p.add_argument_group("connection limits (a client can hold only bounded time, sockets and memory)")
    for flag, kind, what in (
        ("--header-timeout", _positive, "seconds a request's head may take to arrive, else 408 and close"),
        ("--body-timeout", _positive, "seconds a request's body may take to arrive, else 408 and close"),
        ("--idle-timeout", _positive, "seconds a keep-alive connection may wait for its next request"),
        ("--max-connections", _positive_int, "open connections at once, more get 503 (kept below the fd limit)"),
        (
            "--max-buffered-bytes",
            _positive_int,
            "bytes of request bodies being received at once, all "
            "connections together; a body that does not fit gets 503",
        ),
    ):
        default = getattr(d, flag[2:].replace("-", "_"))
        limits.add_argument(flag, type=kind, default=default, help=f"{what} (default {default})")
    return p


def _scales(args: argparse.Namespace) -> tuple[float, float]:
    """(capacity_scale, time_scale): an explicit option, else the scenario's target.local, else 1."""
    capacity_scale = time_scale = 1.0
    if args.scenario:
        from dynlocust.scenario import LocalTarget, load_scenario

        target = load_scenario(args.scenario).target
        if not isinstance(target, LocalTarget):
            raise DynlocustError(
                f"--scenario {args.scenario}: expected target.local (the local endpoint's capacity), "
                "found a remote target"
            )
        capacity_scale, time_scale = target.capacity_scale, target.time_scale
    return (
        capacity_scale if args.capacity_scale is None else args.capacity_scale,
        time_scale if args.time_scale is None else args.time_scale,
    )


def config_from_args(args: argparse.Namespace) -> LocalConfig:
    capacity_scale, time_scale = _scales(args)
    credentials: dict[str, str] = {}
    if args.verify_signatures:
        key_id, secret = os.environ.get(ENV_KEY_ID), os.environ.get(ENV_SECRET)
        if not key_id or not secret:
            raise DynlocustError(
                f"--verify-signatures expects ${ENV_KEY_ID} and ${ENV_SECRET} to be set, found "
                f"{'neither' if not key_id and not secret else 'only one'} of them (environment)"
            )
        credentials[key_id] = secret
    return LocalConfig(
        host=args.host,
        port=args.port,
        region=args.region,
        create_delay=args.create_delay,
        verify_signatures=args.verify_signatures,
        credentials=credentials,
        capacity=not args.no_capacity,
        capacity_scale=capacity_scale,
        time_scale=time_scale,
        latency_model=args.latency_model,
        header_timeout=args.header_timeout,
        body_timeout=args.body_timeout,
        idle_timeout=args.idle_timeout,
        max_connections=args.max_connections,
        max_buffered_bytes=args.max_buffered_bytes,
    )


def _say(text: str) -> None:
    """One line on the endpoint's console (a scaling floor's notice), flushed: the embedded endpoint logs it."""
    print(f"dynlocust local: {text}", flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        config = config_from_args(args)
    except DynlocustError as exc:
        print(f"dynlocust local: error: {exc}", file=sys.stderr)
        return exc.exit_code
    import signal

    import gevent
    from gevent.event import Event

    from dynlocust.local.server import LocalServer, build_capacity
    from dynlocust.local.store import freeze_after_full_collections

    server = LocalServer(config, capacity=build_capacity(config, notify=_say))
    try:
        create_tables(server, args.table)
    except DynlocustError as exc:
        print(f"dynlocust local: error: {exc}", file=sys.stderr)
        return exc.exit_code
    try:
        host, port = server.start()
    except OSError as exc:
        print(f"dynlocust local: error: cannot listen on {config.host}:{config.port}: {exc.strerror}", file=sys.stderr)
        return ExitCode.BAD_INPUT
    url = f"http://{host}:{port}"
    if args.ready_file:
        tmp = args.ready_file + ".tmp"
        try:
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write(url)
            os.replace(tmp, args.ready_file)  # atomic: a reader never sees half a URL
        except OSError as exc:
            server.stop()
            print(
                f"dynlocust local: error: cannot write --ready-file {args.ready_file}: {exc.strerror}", file=sys.stderr
            )
            return ExitCode.BAD_INPUT
    print(f"dynlocust local endpoint listening on {url}", flush=True)
    freeze_after_full_collections()  # this process now holds the tables: full GC passes must not walk them
    stop = Event()
    gevent.signal_handler(signal.SIGINT, stop.set)
    gevent.signal_handler(signal.SIGTERM, stop.set)
    if args.exit_with_parent:
        gevent.spawn(_until_end_of_input, sys.stdin.fileno(), stop.set)
    stop.wait()
    server.stop()
    return 0


def _until_end_of_input(fd: int, then: Callable[[], None]) -> None:
    """Read `fd` until its end (its writer has closed it or exited), then call `then`."""
    from gevent.os import make_nonblocking, nb_read

    make_nonblocking(fd)
    while nb_read(fd, 4096):
        pass
    _say("stdin closed (--exit-with-parent): the parent has gone, stopping")
    then()


if __name__ == "__main__":
    sys.exit(main())
