"""The old import paths the README and the starter showed keep working for one release, each with a
DeprecationWarning that names the new path, and each hands back the very object the new path does."""

from __future__ import annotations

import importlib
import sys

import locust  # noqa: F401 - first, for gevent patching

import pytest

import dynlocust


@pytest.mark.parametrize(
    ("module", "name", "new_path"),
    [
        ("dynlocust.users", "DynamoDBUser", "from dynlocust"),
        ("dynlocust.users", "shared_boto3_client", "from dynlocust"),
        ("dynlocust.fast_users", "FastDynamoDBUser", "from dynlocust"),
        ("dynlocust.mapper_users", "MapperUser", "from dynlocust"),
    ],
)
def test_an_old_module_warns_on_import_and_aliases_the_new_names(
    module: str, name: str, new_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(sys.modules, module, raising=False)  # the warning fires when the module is first imported
    with pytest.warns(DeprecationWarning, match=rf"{module} is deprecated: import .*{name}.* {new_path}"):
        old = importlib.import_module(module)
    assert getattr(old, name) is getattr(dynlocust, name)


def test_plugin_settings_for_warns_and_is_the_public_one() -> None:
    import dynlocust.plugin

    with pytest.warns(DeprecationWarning, match=r"dynlocust\.plugin\.settings_for is deprecated: use `from dynlocust"):
        old = dynlocust.plugin.settings_for
    assert old is dynlocust.settings_for


def test_plugin_has_no_other_hidden_names() -> None:
    import dynlocust.plugin

    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        dynlocust.plugin.nope  # noqa: B018
