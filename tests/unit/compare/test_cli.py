"""`compare --pairs` loading and row checks, without an endpoint (the measured runs are integration tests)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dynlocust.compare.cli import _select, load_pairs, main, run
from dynlocust.compare.measure import Case
from dynlocust.errors import DynlocustError


def test_a_pairs_file_loads_and_names_its_function(tmp_path: Path) -> None:
    module = tmp_path / "team_pairs.py"
    module.write_text(
        "from __future__ import annotations\nfrom dataclasses import dataclass\n\n\n"
        "@dataclass\nclass Cart:\n    id: str\n\n\ndef pairs(context):\n    return [Cart('c1')]\n"
    )
    assert [cart.id for cart in load_pairs(str(module)).pairs(None)] == ["c1"]


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("x = 1\n", "expected a function pairs(context), found none"),
        ("raise RuntimeError('no table')\n", "expected an importable module, found RuntimeError: no table"),
    ],
)
def test_a_bad_pairs_file_is_one_clear_error(tmp_path: Path, source: str, message: str) -> None:
    module = tmp_path / "team_pairs.py"
    module.write_text(source)
    with pytest.raises(DynlocustError, match=r"compare --pairs .*team_pairs\.py: ") as error:
        load_pairs(str(module))
    assert message in str(error.value)


def test_rows_must_be_cases_and_only_must_match() -> None:
    cases = [Case("save a cart", print, print), Case("load a cart", print, print)]
    assert [c.name for c in _select(cases, ["load"], "compare")] == ["load a cart"]
    with pytest.raises(DynlocustError, match=r"expected pairs\(context\) to return Case objects, found \('x'"):
        _select([*cases, ("x", print, print)], (), "compare --pairs m")
    with pytest.raises(DynlocustError, match="compare --only: expected text found in an operation name"):
        _select(cases, ["delete"], "compare")


def test_adapter_and_pairs_together_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--adapter", "pynamodb", "--pairs", "team_pairs"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dynlocust compare: error: expected either --adapter or --pairs") and "Traceback" not in err


def test_a_failing_pairs_function_is_one_clear_error_and_teardown_still_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module = tmp_path / "team_pairs.py"
    module.write_text(
        "def pairs(context):\n    raise RuntimeError('no table carts')\n\n\n"
        "def teardown(context):\n    raise RuntimeError('nothing to delete')\n"
    )
    with pytest.raises(DynlocustError, match=r"expected pairs\(context\) to return its rows, found RuntimeError: no"):
        run("http://127.0.0.1:9", pairs=str(module))  # no call reaches the endpoint
    assert "teardown failed: nothing to delete" in capsys.readouterr().err
