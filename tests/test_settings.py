import os
from pathlib import Path

import pytest

from proctor.errors import UsageError
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.settings import ServiceSettings, Settings, default_slot_locks


def test_environment_variables_override_the_defaults(tmp_path: Path) -> None:
    settings = Settings.from_env(
        {
            "PROCTOR_WORK_ROOT": str(tmp_path / "runs"),
            "PROCTOR_SANDBOX": "process",
            "PROCTOR_ALLOW_UNSANDBOXED": "1",
            "PROCTOR_SLOT_UID_BASE": "70000",
            "PROCTOR_SLOT_LOCKS": str(tmp_path / "locks"),
        }
    )
    assert settings.work_root == tmp_path / "runs"
    assert settings.sandbox_backend == "process"
    assert settings.allow_unsandboxed
    assert settings.slot_uid_base == 70000
    assert settings.slot_locks == tmp_path / "locks"


@pytest.mark.skipif(os.geteuid() != 0, reason="root defaults")
def test_as_root_runs_and_slot_locks_live_where_every_slot_uid_can_reach_them() -> None:
    settings = Settings.from_env({})
    assert settings.work_root == Path("/var/lib/proctor/runs")
    assert settings.slot_locks == Path("/run/lock/proctor")


def test_slot_locks_are_host_wide_whatever_the_work_root(tmp_path: Path) -> None:
    """Hardening item 13: tests (with their own work roots) took slots no real run saw."""
    settings = Settings(work_root=tmp_path)
    assert settings.slot_locks == default_slot_locks(settings.is_root)


def test_the_test_suites_slot_uids_never_meet_a_real_evaluations() -> None:
    """Hardening item 13: `make test` failed while a real evaluation ran on the host."""
    from sandbox_helpers import SLOT_BASE

    real = range(Settings.from_env({}).slot_uid_base, Settings.from_env({}).slot_uid_base + 64)
    assert SLOT_BASE not in real and SLOT_BASE + 63 not in real


def test_an_unknown_sandbox_backend_names_the_variable_and_the_choices() -> None:
    with pytest.raises(UsageError, match=r"PROCTOR_SANDBOX='docker'.*bwrap, process"):
        Settings.from_env({"PROCTOR_SANDBOX": "docker"})


def test_being_root_is_read_from_the_process_once_and_can_be_overridden(tmp_path: Path) -> None:
    assert Settings.from_env({}).is_root == (os.geteuid() == 0)
    assert Settings(work_root=tmp_path).is_root == (os.geteuid() == 0)
    assert not Settings(work_root=tmp_path, is_root=False).is_root


def test_a_sandbox_told_it_is_not_root_runs_slots_as_the_caller(tmp_path: Path) -> None:
    sandbox = BwrapSandbox(Settings(work_root=tmp_path, is_root=False))
    assert sandbox.slot_ids(3) == (os.getuid(), os.getgid())


def test_the_broker_and_queue_of_the_celery_executor_come_from_the_environment() -> None:
    default = ServiceSettings.from_env({})
    assert (default.broker_url, default.queue) == ("redis://127.0.0.1:6379/0", "proctor")
    chosen = ServiceSettings.from_env(
        {"PROCTOR_BROKER_URL": "amqp://guest@127.0.0.1:5672//", "PROCTOR_QUEUE": "gpu"}
    )
    assert (chosen.broker_url, chosen.queue) == ("amqp://guest@127.0.0.1:5672//", "gpu")


def test_queue_routes_send_a_challenge_to_its_own_queue_and_bad_ones_are_named() -> None:
    routed = ServiceSettings.from_env({"PROCTOR_QUEUE_ROUTES": "autowsl:bigmem, toy:gpu"})
    assert [routed.queue_of(c) for c in ("autowsl", "toy", "other")] == ["bigmem", "gpu", "proctor"]
    with pytest.raises(UsageError, match="PROCTOR_QUEUE_ROUTES: 'autowsl' is not CHALLENGE:QUEUE"):
        ServiceSettings.from_env({"PROCTOR_QUEUE_ROUTES": "autowsl"})


def test_the_fair_queue_and_upload_limits_come_from_the_environment() -> None:
    default = ServiceSettings.from_env({})
    assert (default.team_jobs, default.upload_unpacks, default.upload_wait_s) == (2, 2, 30.0)
    assert (default.upload_min_bytes, default.upload_window_s) == (1024, 30.0)
    assert default.orphan_grace_s == 3600.0
    chosen = ServiceSettings.from_env(
        {"PROCTOR_TEAM_JOBS": "0", "PROCTOR_UPLOAD_UNPACKS": "4", "PROCTOR_UPLOAD_WAIT_S": "5",
         "PROCTOR_UPLOAD_MIN_BYTES": "0", "PROCTOR_UPLOAD_WINDOW_S": "2",
         "PROCTOR_ORPHAN_GRACE_S": "60"}
    )  # fmt: skip
    assert (chosen.team_jobs, chosen.upload_unpacks, chosen.upload_wait_s) == (0, 4, 5.0)
    assert (chosen.upload_min_bytes, chosen.upload_window_s, chosen.orphan_grace_s) == (0, 2, 60)
    with pytest.raises(UsageError, match="PROCTOR_TEAM_JOBS='two' is not a whole number"):
        ServiceSettings.from_env({"PROCTOR_TEAM_JOBS": "two"})
