"""Entries run inside the reference environment: real bwrap, the image as the sandbox root."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from paths import BUNDLED

from proctor.environments.store import BuiltEnvironment
from proctor.sandbox.base import Limits, MiB, Mount, Outcome, RunSpec
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.sandbox.rootfs import RootFilesystem
from proctor.settings import Settings

pytestmark = [pytest.mark.sandbox, pytest.mark.environment, pytest.mark.slow]
LIMITS = Limits(wall_s=60, memory_bytes=2048 * MiB, processes=64)
PROCTOR = Path(sys.executable).parent / "proctor"
HOST_ONLY = "/usr/bin/mmdebstrap"  # on the host (Proctor builds with it), never in an image


def run_in(
    env: BuiltEnvironment, settings: Settings, script: str, *, mounts: list[Mount] | None = None
) -> Outcome:
    sandbox = BwrapSandbox(settings)
    with sandbox.session(RootFilesystem(env.rootfs, env.image)) as session:
        return session.run(RunSpec(["/bin/sh", "-c", script], mounts=mounts or [], limits=LIMITS))


def test_the_scientific_python_stack_imports(
    reference_env: BuiltEnvironment, env_settings: Settings
) -> None:
    code = "import numpy, scipy, sklearn, h5py, wfdb, pandas; print(numpy.__version__)"
    outcome = run_in(reference_env, env_settings, f'python3 -c "{code}"')
    assert outcome.succeeded, outcome.stderr
    assert outcome.stdout.strip() == reference_env.manifest.wheels["numpy"][0]


def test_a_file_only_the_host_has_is_absent(
    reference_env: BuiltEnvironment, env_settings: Settings
) -> None:
    assert Path(HOST_ONLY).exists()
    outcome = run_in(reference_env, env_settings, f"test -e {HOST_ONLY} && echo LEAK || echo ok")
    assert outcome.stdout.strip() == "ok"
    version = run_in(reference_env, env_settings, "cat /etc/debian_version").stdout.strip()
    assert version.startswith("12.")


def test_the_root_is_read_only(reference_env: BuiltEnvironment, env_settings: Settings) -> None:
    script = "for d in /usr /etc /usr/local/lib /opt /; do touch $d/x 2>/dev/null && echo $d; done"
    outcome = run_in(reference_env, env_settings, script)
    assert outcome.stdout.strip() == ""


def test_the_sandboxs_own_identity_files_cover_the_images(
    reference_env: BuiltEnvironment, env_settings: Settings
) -> None:
    outcome = run_in(reference_env, env_settings, "id -un; cat /etc/hosts; ls /etc/shadow")
    assert outcome.stdout.splitlines()[0] == "sandbox"
    assert "sandbox" in outcome.stdout.splitlines()[1]
    assert "No such file" in outcome.stderr


def test_isolation_holds_with_the_image_as_root(
    reference_env: BuiltEnvironment, env_settings: Settings, shared_dir: Path
) -> None:
    secret = shared_dir / "refs"
    secret.mkdir()
    (secret / "answer.txt").write_text("HIDDEN")
    code = (
        "import os, socket, sys\n"
        "s = socket.socket()\n"
        "try:\n    s.connect(('127.0.0.1', 5432)); print('NET')\nexcept OSError: pass\n"
        "pids = [p for p in os.listdir('/proc') if p.isdigit()]\n"
        "print('PIDS', len(pids))\n"
        f"print('REF', os.path.exists({str(secret)!r}))\n"
        "print('SYS', os.path.exists('/sys/kernel'))\n"
    )
    (shared_dir / "probe.py").write_text(code)
    mounts = [Mount(shared_dir / "probe.py", "/probe.py")]
    outcome = run_in(reference_env, env_settings, "python3 /probe.py", mounts=mounts)
    assert outcome.succeeded, outcome.stderr
    lines = outcome.stdout.splitlines()
    assert "NET" not in lines
    assert int(lines[0].split()[1]) <= 3
    assert "REF False" in lines and "SYS False" in lines


def test_as_root_each_session_mounts_its_own_private_image(
    reference_env: BuiltEnvironment, env_settings: Settings
) -> None:
    if os.geteuid() != 0:
        pytest.skip("private image mounts need root")
    sandbox = BwrapSandbox(env_settings)
    root = RootFilesystem(reference_env.rootfs, reference_env.image)
    with sandbox.session(root) as first, sandbox.session(root) as second:
        assert first.private_root and second.private_root
        points = [line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()
                  if "erofs" in line and str(env_settings.work_root) in line]  # fmt: skip
        assert len(set(points)) == 2
    left = [line for line in Path("/proc/self/mountinfo").read_text().splitlines()
            if str(env_settings.work_root) in line and "erofs" in line]  # fmt: skip
    assert left == []


@pytest.fixture
def unprivileged_user() -> Iterator[str]:
    name = "proctor-tester"
    if os.geteuid() != 0:
        pytest.skip("creating a user needs root")
    try:
        pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "--create-home", name], check=True)
    yield name


def skip_unless_runnable_by(user: str, env: dict[str, str]) -> None:
    """Skip, saying why, when ``user`` cannot start this checkout's ``proctor`` at all.

    A clone in a folder other users cannot enter (``/root`` is 0700), or a Python installed
    there, cannot be run by them: that is the host's layout, not a fault of Proctor's.
    """
    probe = subprocess.run(
        ["setpriv", f"--reuid={user}", f"--regid={user}", "--init-groups", "--",
         str(PROCTOR), "--help"],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    if probe.returncode != 0 and "Permission denied" in probe.stderr:
        pytest.skip(
            f"{user} cannot run {PROCTOR} (a folder on its path, or its Python's, is closed "
            "to other users): clone into a folder others can enter to run this test"
        )


def test_proctor_run_works_as_an_unprivileged_user(
    reference_env: BuiltEnvironment, unprivileged_user: str, shared_dir: Path
) -> None:
    entry = shared_dir / "entry"
    baseline = BUNDLED / "physionet2018" / "baseline"
    shutil.copytree(baseline, entry)
    shutil.chown(shared_dir, unprivileged_user)
    for path in [entry, *entry.rglob("*")]:
        shutil.chown(path, unprivileged_user)
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": f"/home/{unprivileged_user}",
        "PROCTOR_ENV_ROOT": str(reference_env.folder.parent),
        "PROCTOR_WORK_ROOT": str(shared_dir / "work"),
    }
    skip_unless_runnable_by(unprivileged_user, env)
    done = subprocess.run(
        ["setpriv", f"--reuid={unprivileged_user}", f"--regid={unprivileged_user}",
         "--init-groups", "--", str(PROCTOR), "run", str(entry), "-c", "physionet2018",
         "--json", "--jobs", "2"],
        capture_output=True, text=True, env=env, timeout=280, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["status"] == "scored"
    assert report["scores"]["arousal"]["auprc"] == pytest.approx(0.8248718847078537, abs=1e-12)
    assert report["environment"]["name"] == "proctor-reference"
    assert report["environment"]["shared_page_cache"] is True  # no private mount without root


@pytest.mark.very_slow  # a second build of the reference environment: `make test-slow`
def test_a_second_build_from_the_published_lock_lists_the_same_packages(
    reference_env: BuiltEnvironment, reference_spec: object, tmp_path: Path
) -> None:
    """What a second machine does: build from the shipped environment.lock into its own store."""
    from dataclasses import replace

    from proctor.environments.lockfile import read_lock
    from proctor.services.local.environments import ensure_environment

    settings = replace(Settings.from_env(), env_root=tmp_path / "store")
    again = ensure_environment(reference_spec, settings).built  # type: ignore[arg-type]
    assert again.folder != reference_env.folder
    assert again.manifest.packages == reference_env.manifest.packages
    assert again.manifest.wheels == reference_env.manifest.wheels
    assert not read_lock(reference_env.lock).differences(read_lock(again.lock))


def test_env_shell_runs_in_the_environment_with_the_entry_and_the_data(
    reference_env: BuiltEnvironment, shared_dir: Path
) -> None:
    entry = shared_dir / "entry"
    entry.mkdir()
    (entry / "hello.txt").write_text("from the entry\n")
    commands = (
        "cat hello.txt; ls $PROCTOR_DATA | head -1; "
        f"test -e {HOST_ONLY} && echo LEAK; python3 -c 'import sklearn'; exit 7\n"
    )
    done = subprocess.run(
        [str(PROCTOR), "env", "shell", "physionet2018", "--entry", str(entry)],
        input=commands, capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "PROCTOR_WORK_ROOT": str(shared_dir / "work")},
    )  # fmt: skip
    assert done.returncode == 7, done.stderr[-1500:]
    assert "from the entry" in done.stdout
    assert "RECORDS" in done.stdout
    assert "LEAK" not in done.stdout
    assert (entry / "hello.txt").read_text() == "from the entry\n"  # the original is untouched
