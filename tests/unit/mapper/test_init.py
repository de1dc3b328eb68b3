"""What importing the mapper pulls in: its core without Locust (no gevent patching at import), `MapperUser` lazily.

Each check runs in a fresh interpreter, because this test process has long since imported Locust.
"""

from __future__ import annotations

import subprocess
import sys


def python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, timeout=60)


def test_the_mapper_core_imports_without_locust() -> None:
    done = python(
        "import sys\n"
        "from dynlocust.mapper import Deserializer, Repository, Serializer, entity, model_of\n"
        "assert Serializer().serialize(1) == {'N': '1'}\n"
        "print(sorted(m for m in ('locust', 'gevent.monkey') if m in sys.modules))\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_mapper_user_is_exported_from_dynlocust_and_the_mapper() -> None:
    done = python(
        "from dynlocust import MapperUser\n"
        "from dynlocust.mapper import MapperUser as FromMapper\n"
        "from dynlocust.user_classes.mapper_user import MapperUser as Defined\n"
        "import dynlocust, dynlocust.mapper\n"
        "assert MapperUser is FromMapper is Defined and MapperUser.abstract\n"
        "assert 'MapperUser' in dynlocust.__all__ and 'MapperUser' in dynlocust.mapper.__all__\n"
        "print('ok')\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_an_unknown_name_is_an_attribute_error() -> None:
    done = python("import dynlocust.mapper as m\ntry:\n    m.NoSuchThing\nexcept AttributeError as e:\n    print(e)\n")
    assert done.stdout.strip() == "module 'dynlocust.mapper' has no attribute 'NoSuchThing'"
