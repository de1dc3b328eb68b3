"""A missing comparison peer fails the test in CI and skips it, with the reason, elsewhere."""

from __future__ import annotations

import pytest

from tests.support.peers import require_peer


@pytest.mark.parametrize(
    ("ci", "outcome"),
    [
        ("true", pytest.fail.Exception),
        ("1", pytest.fail.Exception),
        ("", pytest.skip.Exception),
        ("false", pytest.skip.Exception),
    ],
)
def test_a_missing_peer(ci: str, outcome: type[BaseException], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", ci)
    with pytest.raises(outcome, match=r"comparison peer no_such_peer\.internals is missing .*; the oracle"):
        require_peer("no_such_peer.internals", "the oracle")


def test_a_present_peer_is_imported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    assert require_peer("json.decoder", "stdlib").__name__ == "json.decoder"
