"""Authoring: ``proctor challenge new`` for every protocol, its baseline scored at once by
``proctor run``, ``challenge check`` listing every problem, and the same challenges hosted by
``proctor serve``: added, submitted, scored; a failing scoring program's logs reach the
organizer alone and a fixed program rescores the kept outputs (issue 17)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from proctor.resolve import load_challenge
from proctor.services.local.authoring import check_challenge, new_challenge
from proctor.services.local.environments import tasks_on_host
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.settings import Settings
from proctor.types import RunStatus

PROCTOR = str(Path(sys.executable).with_name("proctor"))
PROTOCOLS = ("records", "command", "python_model", "physionet_model", "predictions")
METRICS = {
    "command": {"dice", "over_half"},
    "physionet_model": {"accuracy", "auroc", "sessions_without_output"},
}
"""Each template's metrics where they are not the mean absolute error and the share within 1."""
SECRET_LINE = "print('HIDDEN-REF', open(os.environ['PROCTOR_REFERENCE'] + '/h01.txt').read())"


def proctor(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PROCTOR, *args], env=env or dict(os.environ), capture_output=True,
                          text=True, timeout=280, check=False)  # fmt: skip


@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_new_challenge_scores_its_baseline_at_once(shared_dir: Path, protocol: str) -> None:
    folder = shared_dir / protocol
    new_challenge(folder, protocol, name=f"new-{protocol.replace('_', '-')}")
    assert check_challenge(folder) == []
    report = run_entry(
        RunRequest(folder / "baseline", str(folder)), Settings(work_root=shared_dir / "runs")
    )
    assert report.status is RunStatus.SCORED, report.to_json()
    scores = report.scores["main"]
    assert set(scores) == METRICS.get(protocol, {"mae", "within_1"})
    assert all(0 <= value < 10 for value in scores.values())


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_each_kit_readme_speaks_of_its_own_scores_and_entry(tmp_path: Path, protocol: str) -> None:
    """The records KIT.md spoke of "the Dice of the masks", the command template's metric."""
    new_challenge(tmp_path / "c", protocol)
    kit = (tmp_path / "c" / "KIT.md").read_text()
    scores = kit[kit.index("## Scores") : kit.index("## Submitting")]
    metrics = load_challenge(tmp_path / "c").tasks[0].scorer.metrics  # type: ignore[union-attr]
    masks, sessions = protocol == "command", protocol == "physionet_model"
    assert ("Dice" in scores) is masks and ("ROC" in scores) is sessions
    assert ("mean absolute error" in scores) is not (masks or sessions)
    assert set(metrics) == METRICS.get(protocol, {"mae", "within_1"})
    submitting = kit[kit.index("## Submitting") :]
    code = protocol != "predictions"
    assert ("DRYRUN" in submitting) is code and ("predictions.csv" in submitting) is not code


def test_challenge_new_refuses_a_folder_in_use_and_an_unknown_protocol(tmp_path: Path) -> None:
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "notes.txt").write_text("mine")
    done = proctor("challenge", "new", str(tmp_path / "used"), "--protocol", "records")
    assert done.returncode == 2 and "not an empty folder" in done.stderr
    done = proctor("challenge", "new", str(tmp_path / "x"), "--protocol", "kaggle")
    assert done.returncode == 2 and "use one of records, command" in done.stderr


def test_challenge_check_takes_a_bundled_name_and_names_an_unknown_one(tmp_path: Path) -> None:
    assert check_challenge(Path("physionet2026")) == []  # resolved as `run` and `kit` do
    done = proctor("challenge", "check", str(tmp_path / "nothing-here"), "--no-run")
    assert done.returncode == 2
    assert "no challenge folder or bundled challenge called" in done.stderr, done.stderr
    assert "physionet2026" in done.stderr  # the bundled names, to pick from


def test_challenge_check_lists_every_problem_at_once(tmp_path: Path) -> None:
    folder = tmp_path / "c"
    assert proctor("challenge", "new", str(folder), "--protocol", "records").returncode == 0
    ready = proctor("challenge", "check", str(folder), "--json")
    assert ready.returncode == 0, ready.stderr
    assert json.loads(ready.stdout) == {"ok": True, "problems": []}
    (folder / "scoring" / "score.py").unlink()
    (folder / "scoring" / "check.py").unlink()
    done = proctor("challenge", "check", str(folder), "--json")
    assert done.returncode == 2
    problems = json.loads(done.stdout)["problems"]
    assert [p["location"] for p in problems] == [
        "tasks[0].scorer.command[1]",
        "tasks[0].scorer.check[1]",
    ]
    assert "score.py is not in the scoring program's folder" in problems[0]["message"]
    yaml = folder / "challenge.yaml"
    text = yaml.read_text().replace("direction: lower", "direction: down")
    yaml.write_text(text.replace("leaderboard: {metric: mae}", "leaderboard: {metric: rmse}"))
    done = proctor("challenge", "check", str(folder))
    assert done.returncode == 2
    assert "tasks[0].scorer.metrics.mae.direction" in done.stderr
    assert "tasks: Tuple" not in done.stderr


def _archive(folder: Path, dest: Path) -> Path:
    with tarfile.open(dest, "w:gz") as tar:
        tar.add(folder, arcname="entry")
    return dest


class Service:
    """A real ``proctor serve`` on 127.0.0.1 with an organizer (olga) and a participant (bob)."""

    def __init__(self, data: Path) -> None:
        self.env = dict(os.environ, PROCTOR_DATA=str(data))
        self.env.pop("PROCTOR_DATABASE_URL", None)
        self.env.pop("PROCTOR_TOKEN", None)
        self.tokens = {}
        for name, extra in (("olga", ["--organizer"]), ("bob", ["--team", "blue"])):
            added = proctor("user", "add", name, *extra, "--json", env=self.env)
            assert added.returncode == 0, added.stderr
            self.tokens[name] = json.loads(added.stdout)["token"]
        self.process = subprocess.Popen(
            [PROCTOR, "serve", "--port", "0", "--workers", "2", "--json"],
            env=self.env, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert self.process.stdout is not None
        self.url = json.loads(self.process.stdout.readline())["url"]

    def cli(self, *args: str, user: str) -> subprocess.CompletedProcess[str]:
        env = dict(self.env, PROCTOR_SERVER=self.url, PROCTOR_TOKEN=self.tokens[user])
        return proctor(*args, env=env)

    def get(self, path: str, user: str) -> httpx.Response:
        headers = {"Authorization": f"Bearer {self.tokens[user]}"}
        return httpx.get(f"{self.url}{path}", headers=headers, timeout=60)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)
        if self.process.stdout is not None:
            self.process.stdout.close()


@pytest.fixture
def service(shared_dir: Path) -> Iterator[Service]:
    served = Service(shared_dir / "data")
    yield served
    served.stop()


def _wait(service: Service, sid: str) -> dict[str, object]:
    deadline = time.time() + 240
    while time.time() < deadline:
        found = json.loads(service.cli("status", sid, "--json", user="bob").stdout)
        if found["status"] not in ("queued", "running"):
            return dict(found)
        time.sleep(1)
    raise AssertionError(f"submission {sid} did not finish")


@pytest.mark.very_slow  # a minute or more of a slow machine's CI: `make test-slow`
@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.timeout(600)  # five challenges added and evaluated by one server: minutes when loaded
def test_new_challenges_of_every_protocol_are_served_and_scored(
    service: Service, shared_dir: Path
) -> None:
    sids = {}
    for protocol in PROTOCOLS:
        name = f"new-{protocol.replace('_', '-')}"
        folder = shared_dir / name
        new_challenge(folder, protocol, name=name)
        added = service.cli("challenge", "add", str(folder), "--json", user="olga")
        assert added.returncode == 0, added.stderr
        entry = _archive(folder / "baseline", shared_dir / f"{name}.tar.gz")
        queued = service.cli("submit", str(entry), "-c", name, "--no-wait", "--json", user="bob")
        assert queued.returncode == 0, queued.stderr
        sids[protocol] = json.loads(queued.stdout)["submission"]
    for protocol, sid in sids.items():
        final = _wait(service, sid)
        assert final["status"] == "scored", (protocol, final)
        name = f"new-{protocol.replace('_', '-')}"
        board = json.loads(service.cli("leaderboard", name, "--json", user="bob").stdout)
        assert [row["submission"] for row in board["rows"]] == [sid]


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_failing_program_shows_the_organizer_alone_and_a_fixed_one_rescores(
    service: Service, shared_dir: Path
) -> None:
    folder = shared_dir / "mae"
    new_challenge(folder, "records", name="mae")
    program = folder / "scoring" / "score.py"
    good = program.read_text()
    program.write_text(
        good.replace("rows = {}", f"{SECRET_LINE}\nrows = {{}}\nraise SystemExit(7)")
    )
    assert service.cli("challenge", "add", str(folder), user="olga").returncode == 0
    entry = _archive(folder / "baseline", shared_dir / "entry.tar.gz")
    done = service.cli("submit", str(entry), "-c", "mae", "--json", user="bob")
    assert done.returncode == 3, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["failure"] == "scorer"
    assert "E-SCORE" in done.stdout
    secret = (folder / "data/reference/h01.txt").read_text().strip()
    assert "HIDDEN-REF" not in done.stdout + done.stderr
    sid = report["submission"]
    assert service.get(f"/api/v1/submissions/{sid}/logs", "bob").status_code == 404
    logs = service.get(f"/api/v1/submissions/{sid}/logs", "olga")
    assert logs.status_code == 200, logs.text
    task = logs.json()["tasks"][0]
    assert "the scoring program exited with status 7" in task["logs"]["score-error.txt"]
    assert f"HIDDEN-REF {secret}" in task["logs"]["scoring-main.log"]
    program.write_text(good)
    assert service.cli("challenge", "add", str(folder), user="olga").returncode == 0
    rescored = service.cli("rescore", "mae", "--json", user="olga")
    assert rescored.returncode == 0, rescored.stderr
    assert json.loads(rescored.stdout)["rescored"] == 1
    status = json.loads(service.cli("status", sid, "--json", user="bob").stdout)
    assert status["status"] == "scored", status
    assert status["report"]["scores"]["main"]["mae"] >= 0


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_kit_keeps_its_layout_and_never_names_the_challenge_folder(
    tmp_path: Path, protocol: str
) -> None:
    folder = tmp_path / "secret-place"
    new_challenge(folder, protocol, name="kitted")
    for ships_readme in (True, False):
        if not ships_readme:
            (folder / "KIT.md").unlink()
        dest = tmp_path / f"kit-{ships_readme}"
        done = proctor("kit", str(folder), str(dest))
        assert done.returncode == 0, done.stderr
        assert sorted(p.name for p in dest.iterdir()) == ["README.md", "challenge", "data", "entry"]
        readme = (dest / "README.md").read_text()
        assert "secret-place" not in readme and str(tmp_path) not in readme
        assert "kitted" in readme and "proctor run entry --challenge challenge" in readme
        assert not any("reference" in str(p) for p in (dest / "data").rglob("*"))
        baseline = sorted(
            p.relative_to(folder / "baseline") for p in (folder / "baseline").rglob("*")
        )
        assert (
            sorted(p.relative_to(dest / "entry") for p in (dest / "entry").rglob("*")) == baseline
        )


def test_a_predictions_challenge_needs_no_host_environment_exception(tmp_path: Path) -> None:
    for protocol in ("predictions", "records"):
        folder = tmp_path / protocol
        new_challenge(folder, protocol)
        yaml = folder / "challenge.yaml"
        text = yaml.read_text()
        yaml.write_text(text[: text.index("environment:")] + text[text.index("disclosure:") :])
        challenge = load_challenge(folder)
        assert challenge.environment_of("main") is None  # environment: host
        expected = [] if protocol == "predictions" else ["main"]
        assert tasks_on_host(challenge, ["main"]) == expected
