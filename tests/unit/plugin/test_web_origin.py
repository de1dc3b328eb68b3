"""Whose requests the web UI takes (`OriginRule`), and the WSGI guard's answers, table by table."""

from __future__ import annotations

from typing import Any

import pytest

from dynlocust.plugin.web_origin import OriginGuard, OriginRule, install, is_loopback

UI = "127.0.0.1:8089"
LOOPBACK = OriginRule(loopback_only=True)
EVERYWHERE = OriginRule(loopback_only=False)
PROXIED = OriginRule(loopback_only=True, web_origin="https://locust.example.com")


@pytest.mark.parametrize(
    ("rule", "method", "host", "origin", "referer", "taken"),
    [
        # the page itself: Origin is the Host it was served under
        (LOOPBACK, "POST", UI, f"http://{UI}", None, True),
        (LOOPBACK, "POST", "localhost:8089", "http://localhost:8089", None, True),
        (LOOPBACK, "POST", "[::1]:8089", "http://[::1]:8089", None, True),
        (LOOPBACK, "POST", UI, f"HTTP://{UI}", None, True),  # scheme and host are case-insensitive
        (EVERYWHERE, "POST", "build-7.internal:8089", "http://build-7.internal:8089", None, True),
        (LOOPBACK, "POST", UI, None, f"http://{UI}/?tab=dynamodb", True),  # no Origin: the Referer's
        (LOOPBACK, "POST", UI, None, None, True),  # curl or a script: neither header
        (LOOPBACK, "GET", UI, None, "http://evil.example/", True),  # a link followed from another site
        # another page
        (LOOPBACK, "POST", UI, "http://evil.example", None, False),
        (LOOPBACK, "GET", UI, "http://evil.example", None, False),  # a cross-origin read
        (LOOPBACK, "OPTIONS", UI, "http://evil.example", None, False),  # its preflight
        (LOOPBACK, "POST", UI, "null", None, False),  # sandboxed frame, data: page, no-referrer policy
        (LOOPBACK, "POST", UI, "", None, False),
        (LOOPBACK, "POST", UI, "http://127.0.0.1:8090", None, False),  # another port is another origin
        (LOOPBACK, "POST", UI, "http://localhost:8089", None, False),  # another name too
        (LOOPBACK, "POST", UI, "http://127.0.0.1", None, False),
        (LOOPBACK, "POST", UI, f"http://{UI}.evil.example", None, False),
        (LOOPBACK, "POST", UI, f"http://{UI}@evil.example", None, False),
        (LOOPBACK, "POST", UI, f"ftp://{UI}", None, False),
        (LOOPBACK, "POST", UI, UI, None, False),
        (LOOPBACK, "DELETE", UI, None, "http://evil.example/attack.html", False),
        (LOOPBACK, "PUT", UI, None, f"http://{UI}@evil.example/", False),
        (LOOPBACK, "POST", UI, "http://evil.example", f"http://{UI}/", False),  # Origin decides when present
        # DNS rebinding: evil.example resolved to 127.0.0.1, same-origin to itself
        (LOOPBACK, "GET", "evil.example:8089", None, None, False),
        (LOOPBACK, "POST", "evil.example:8089", "http://evil.example:8089", None, False),
        (LOOPBACK, "GET", "0.0.0.0:8089", None, None, False),
        (LOOPBACK, "GET", "[::1", None, None, False),
        (EVERYWHERE, "GET", "evil.example:8089", None, None, True),  # not loopback: --web-login's job
        # behind a reverse proxy at --web-origin, which forwards its own Host or the browser's
        (PROXIED, "POST", UI, "https://locust.example.com", None, True),
        (PROXIED, "POST", "locust.example.com", "https://locust.example.com", None, True),
        (PROXIED, "POST", UI, "https://evil.example", None, False),
        (PROXIED, "GET", "evil.example", None, None, False),
        # no Host (HTTP/1.0, not a browser)
        (LOOPBACK, "POST", None, None, None, True),
        (LOOPBACK, "POST", None, f"http://{UI}", None, False),
    ],
)
def test_the_rule(rule: OriginRule, method: str, host: str | None, origin: str | None, referer: str | None,
                  taken: bool) -> None:  # fmt: skip
    assert (rule.refusal(method, host, origin, referer) is None) == taken


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("127.8.0.1", True), ("::1", True), ("[::1]", True), ("localhost", True),
     ("LOCALHOST", True), ("0.0.0.0", False), ("", False), ("10.0.0.1", False), ("localhost.evil.example", False)],
)  # fmt: skip
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def _app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    start_response("200 OK", [("Content-Type", "text/plain"), ("Access-Control-Allow-Origin", "http://evil.example"),
                              ("access-control-allow-credentials", "true"), ("Vary", "Origin")])  # fmt: skip
    return [b"ran"]


def _call(guard: OriginGuard, **headers: str) -> tuple[str, dict[str, str], bytes]:
    answer: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> None:
        answer["status"], answer["headers"] = status, dict(headers)

    environ = {"REQUEST_METHOD": "POST", "PATH_INFO": "/swarm", **{f"HTTP_{k.upper()}": v for k, v in headers.items()}}
    body = b"".join(guard(environ, start_response))
    return answer["status"], answer["headers"], body


def test_the_guard_refuses_before_the_app_and_strips_cors_headers_from_what_it_lets_through() -> None:
    guard = OriginGuard(_app, LOOPBACK)
    status, headers, body = _call(guard, host=UI, origin="http://evil.example")
    assert status == "403 Forbidden" and b"ran" not in body and b"Origin 'http://evil.example'" in body
    assert not any(k.lower().startswith("access-control-") for k in headers)
    status, headers, body = _call(guard, host=UI, origin=f"http://{UI}")
    assert (status, body) == ("200 OK", b"ran")
    assert headers == {"Content-Type": "text/plain", "Vary": "Origin"}


def test_install_wraps_once() -> None:
    class App:
        wsgi_app = staticmethod(_app)

    app = App()
    first = install(app, "127.0.0.1")
    assert first.rule.loopback_only
    assert install(app, "127.0.0.1") is first
    assert app.wsgi_app is first
    assert not install(App(), "").rule.loopback_only  # Locust's "every interface"
