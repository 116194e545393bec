"""Schemathesis over ``/openapi.json``: every operation, generated requests, no server error.

The app runs in uvicorn on 127.0.0.1 over a platform with the toy challenge and one queued
submission of team ``amber`` (no workers: nothing runs in a sandbox). Each generated request
is sent with a participant's token and with an organizer's; every answer must be a non-5xx
that conforms to the schema (documented status, content type, body). Capped at 25 examples
per operation to keep the suite fast.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.checks import CHECKS
from service_seed import Seeded, seed, served, submit
from toy_challenge import make_entry

EXCLUDED = {
    # A request the schema allows may still name no such submission, challenge or board:
    # 404 and 409 are the right answers there, not a broken contract.
    "positive_data_acceptance",
    # The generated ids never exist, so there is nothing to use after it is gone.
    "use_after_free",
    "ensure_resource_availability",
}


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Seeded, str]]:
    root = Path(tmp_path_factory.mktemp("api-schema"))
    seeded = seed(root)
    submit(seeded, "alice", make_entry(root / "entry"))
    with served(seeded.app) as url:
        yield seeded, url
    seeded.platform.close()


def _operations(url: str) -> list[schemathesis.APIOperation]:
    loaded = schemathesis.openapi.from_url(f"{url}/openapi.json")
    return [result.ok() for result in loaded.get_all_operations()]


def _known(seeded: Seeded) -> Callable[[schemathesis.Case], schemathesis.Case]:
    """Put the seeded challenge, submission and a real board into a case's path."""
    known = {"name": "toy", "sid": seeded.submissions[0], "board": "default"}

    def fill(case: schemathesis.Case) -> schemathesis.Case:
        for key in case.path_parameters:
            case.path_parameters[key] = known.get(key, case.path_parameters[key])
        return case

    return fill


def _check_operation(operation: schemathesis.APIOperation, seeded: Seeded) -> None:
    """Up to 25 generated requests of ``operation``, each as a participant and an organizer.

    Half of the cases name what exists (the challenge, the submission), so the requests get
    past the lookups into the use cases.
    """
    excluded = [check for check in CHECKS.get_all() if check.__name__ in EXCLUDED]
    generated = operation.as_strategy()

    @given(case=st.one_of(generated, generated.map(_known(seeded))))
    @settings(
        max_examples=25,
        deadline=timedelta(seconds=10),
        suppress_health_check=list(HealthCheck),
        database=None,
    )
    def check(case: schemathesis.Case) -> None:
        for user in ("alice", "olga"):
            case.call_and_validate(headers=seeded.headers(user), excluded_checks=excluded)

    check()


def test_no_operation_answers_a_server_error_or_outside_its_schema(
    service: tuple[Seeded, str],
) -> None:
    seeded, url = service
    # revoking the callers' tokens goes last: the other operations keep their tokens
    operations = sorted(_operations(url), key=lambda op: op.path.endswith("/tokens/revoke"))
    assert len(operations) >= 14
    for operation in operations:
        _check_operation(operation, seeded)
