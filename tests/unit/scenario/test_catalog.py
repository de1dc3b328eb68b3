"""The shipped scenarios by bare name: the package's copy is the repository's scenarios/, and names resolve."""

from __future__ import annotations

from pathlib import Path

import pytest

from dynlocust.scenario.catalog import SHIPPED_DIR, is_bare_name, resolve, shipped_names, shipped_scenarios
from dynlocust.scenario.model import ScenarioError

ROOT = Path(__file__).resolve().parents[3]


def test_the_package_reads_the_repositorys_scenarios_themselves() -> None:
    assert shipped_names() == sorted(p.stem for p in (ROOT / "scenarios").glob("*.yaml"))
    for name in shipped_names():  # one copy of each file, not two that can drift apart
        assert (SHIPPED_DIR / f"{name}.yaml").resolve() == (ROOT / "scenarios" / f"{name}.yaml").resolve()


def test_listing_gives_each_its_first_sentence_and_target() -> None:
    listed = {s.name: s for s in shipped_scenarios()}
    assert listed["quickstart"].target == "local"
    assert listed["quickstart"].summary == "A one-minute rehearsal on the embedded local endpoint."
    assert listed["write-ceiling"].target == "remote"
    assert all("\n" not in s.summary and s.summary.endswith(".") for s in listed.values())


@pytest.mark.parametrize(
    ("argument", "bare"),
    [("quickstart", True), ("quickstart.yaml", False), ("scenarios/quickstart", False), ("./x", False)],
)
def test_bare_names(argument: str, bare: bool) -> None:
    assert is_bare_name(argument) is bare


def test_a_bare_name_resolves_to_the_shipped_file() -> None:
    assert Path(resolve("quickstart")) == SHIPPED_DIR / "quickstart.yaml"


def test_an_existing_file_wins_over_a_shipped_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("quickstart").write_text("name: mine\n")
    assert resolve("quickstart") == "quickstart"


def test_paths_are_left_for_the_loader_to_judge() -> None:
    assert resolve("no/such/file.yaml") == "no/such/file.yaml"


def test_an_unknown_bare_name_lists_the_shipped_ones() -> None:
    with pytest.raises(ScenarioError) as caught:
        resolve("quickstrat")
    message = str(caught.value)
    assert message.startswith("quickstrat: expected a scenario file or a shipped scenario (")
    assert all(name in message for name in shipped_names())
    assert message.endswith("found neither")
