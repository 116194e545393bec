"""``submission_fields``: a method's name, a description, a code link given with an entry.

Declared in challenge.yaml (checked once, names unique), given through the API (``field.NAME``
form keys), the web form and ``proctor submit --field``; checked (unknown, required, length,
control characters, http(s) links); shown to the team on the submission's page and, when
``public``, on the boards (JSON and page), always escaped. EvalAI's
``submission_meta_attributes`` become fields on import.
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from evalai_challenge import make_evalai_challenge
from service_seed import Seeded, run_queued, seed, served
from table_challenge import TEST, make_table_challenge

from proctor.errors import ConfigError, UsageError
from proctor.resolve import load_challenge
from proctor.sandbox.base import Sandbox
from proctor.services.local.bundle_import import import_challenge
from proctor.services.platform import installs, submissions
from proctor.services.platform.accounts import authenticate
from proctor.settings import Settings

PROCTOR = str(Path(sys.executable).with_name("proctor"))
CSV = ("id,target\n" + "".join(f"{k},{v}\n" for k, v in TEST.items())).encode()
FIELDS = [
    {"name": "method", "label": "Method", "public": True, "max_chars": 40},
    {"name": "description", "kind": "long_text"},
    {"name": "code_url", "label": "Code", "kind": "url", "public": True},
]
HOSTILE = '<script>alert("m")</script>'


def _challenge(root: Path, fields: list[dict[str, Any]]) -> Path:
    folder = make_table_challenge(root / "tabular")
    spec = yaml.safe_load((folder / "challenge.yaml").read_text())
    spec["submission_fields"] = fields
    (folder / "challenge.yaml").write_text(yaml.safe_dump(spec))
    return folder


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[Seeded, str]]:
    seeded = seed(tmp_path / "service")
    olga = authenticate(seeded.platform, seeded.tokens["olga"])
    installs.install(seeded.platform, olga, str(_challenge(tmp_path, FIELDS)))
    with served(seeded.app) as url:
        yield seeded, url
    seeded.platform.close()


def test_a_field_name_used_twice_or_an_unknown_key_is_refused_with_its_path(
    tmp_path: Path,
) -> None:
    twice = _challenge(tmp_path / "a", [{"name": "method"}, {"name": "method"}])
    with pytest.raises(ConfigError, match=r"submission_fields\[1\]\.name"):
        load_challenge(twice)
    unknown = _challenge(tmp_path / "b", [{"name": "method", "shown": True}])
    with pytest.raises(ConfigError, match="shown"):
        load_challenge(unknown)


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ({"paper": "x"}, "no submission field 'paper' (its fields: method, description"),
        ({"method": "m" * 41}, "'method' holds 41 characters, over the 40"),
        ({"method": "a\nb"}, "'method' holds control characters"),
        ({"code_url": "javascript:alert(1)"}, "'code_url' must be an http:// or https://"),
    ],
)
def test_bad_field_values_are_refused_before_anything_is_stored(
    site: tuple[Seeded, str], given: dict[str, str], said: str
) -> None:
    seeded, _ = site
    alice = authenticate(seeded.platform, seeded.tokens["alice"])
    with pytest.raises(UsageError, match=said.replace("(", r"\(")):
        submissions.submit(
            seeded.platform, alice, "tabular", None, io.BytesIO(CSV), "submission.csv",
            fields=given,
        )  # fmt: skip
    assert submissions.listing(seeded.platform, alice, "tabular") == []


def test_a_required_field_left_empty_is_refused(tmp_path: Path) -> None:
    seeded = seed(tmp_path / "service")
    olga = authenticate(seeded.platform, seeded.tokens["olga"])
    folder = _challenge(tmp_path, [{"name": "method", "required": True}])
    installs.install(seeded.platform, olga, str(folder))
    alice = authenticate(seeded.platform, seeded.tokens["alice"])
    with pytest.raises(UsageError, match="'method' is required"):
        submissions.submit(
            seeded.platform, alice, "tabular", None, io.BytesIO(CSV), "submission.csv",
            fields={"method": "  "},
        )  # fmt: skip
    seeded.platform.close()


def test_public_fields_are_on_the_boards_escaped_and_the_rest_only_for_the_team(
    site: tuple[Seeded, str], sandbox: Sandbox, sandbox_settings: Settings
) -> None:
    seeded, url = site
    form = {
        "field.method": HOSTILE,
        "field.description": "private notes\nsecond line",
        "field.code_url": "https://example.org/code?a=1&b=2",
    }
    with httpx.Client(base_url=url, headers=seeded.headers("alice"), timeout=60) as client:
        answer = client.post(
            "/api/v1/challenges/tabular/submissions",
            data=form,
            files={"entry": ("submission.csv", io.BytesIO(CSV))},
        )
        assert answer.status_code == 200, answer.text
        sid = answer.json()["submission"]
        run_queued(seeded, sandbox, sandbox_settings)
        status = client.get(f"/api/v1/submissions/{sid}").json()
        assert status["fields"]["description"] == "private notes\nsecond line"
    with httpx.Client(base_url=url, headers=seeded.headers("bob"), timeout=60) as other:
        board = other.get("/api/v1/challenges/tabular/leaderboards/default").json()
    assert board["field_labels"] == {"method": "Method", "code_url": "Code"}
    (row,) = board["rows"]
    assert row["fields"] == {"method": HOSTILE, "code_url": "https://example.org/code?a=1&b=2"}
    with httpx.Client(base_url=url, headers=seeded.headers("bob"), timeout=60) as other:
        table = other.get("/api/v1/challenges/tabular/leaderboards/default?format=csv").text
    header, line = list(csv.reader(io.StringIO(table)))
    assert header[-2:] == ["field.method", "field.code_url"]
    assert line[-2:] == [HOSTILE, "https://example.org/code?a=1&b=2"]
    page = httpx.get(
        f"{url}/challenges/tabular/leaderboards/default",
        cookies={"proctor_token": seeded.tokens["bob"]},
        timeout=60,
    ).text
    assert HOSTILE not in page
    assert "&lt;script&gt;alert(&#34;m&#34;)&lt;/script&gt;" in page
    assert 'href="https://example.org/code?a=1&amp;b=2"' in page
    assert "private notes" not in page
    mine = httpx.get(
        f"{url}/submissions/{sid}", cookies={"proctor_token": seeded.tokens["alice"]}, timeout=60
    ).text
    assert "private notes\nsecond line" in mine and "(not on the boards)" in mine
    assert HOSTILE not in mine


def test_the_form_offers_the_fields_and_proctor_submit_sends_them(
    site: tuple[Seeded, str],
) -> None:
    seeded, url = site
    page = httpx.get(
        f"{url}/challenges/tabular", cookies={"proctor_token": seeded.tokens["alice"]}, timeout=60
    ).text
    assert 'name="field.method" maxlength="40"' in page
    assert '<textarea name="field.description"' in page
    assert '<input type="url" name="field.code_url"' in page
    env = dict(os.environ, PROCTOR_SERVER=url, PROCTOR_TOKEN=seeded.tokens["alice"])
    bare = Path(seeded.challenge_root).parent / "submission.csv"
    bare.write_bytes(CSV)
    done = subprocess.run(
        [PROCTOR, "submit", str(bare), "-c", "tabular", "--no-wait", "--json",
         "--field", "method=ridge = linear", "--field", "code_url=https://example.org"],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    sid = json.loads(done.stdout)["submission"]
    shown = subprocess.run(
        [PROCTOR, "status", sid, "--json"],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert json.loads(shown.stdout)["fields"] == {
        "method": "ridge = linear",
        "code_url": "https://example.org",
    }
    wrong = subprocess.run(
        [PROCTOR, "submit", str(bare), "-c", "tabular", "--no-wait", "--field", "method"],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert wrong.returncode == 2 and "needs the form NAME=VALUE" in wrong.stderr


def test_evalai_meta_attributes_become_submission_fields(tmp_path: Path) -> None:
    source = make_evalai_challenge(tmp_path / "source")
    config = yaml.safe_load((source / "challenge_config.yaml").read_text())
    config["challenge_phases"][0]["submission_meta_attributes"] = [
        {"name": "Method Name", "description": "what you did", "type": "text", "required": True},
        {"name": "Backbone", "type": "radio", "options": ["ResNet", "ViT"]},
        {"name": "Uses extra data", "type": "boolean"},
    ]
    (source / "challenge_config.yaml").write_text(yaml.safe_dump(config))
    import_challenge(source, tmp_path / "evalai", "host")
    spec = yaml.safe_load((tmp_path / "evalai" / "challenge.yaml").read_text())
    assert spec["submission_fields"] == [
        {"name": "method_name", "label": "Method Name", "description": "what you did",
         "required": True, "public": False},
        {"name": "backbone", "label": "Backbone", "description": "(one of: ResNet, ViT)",
         "required": False, "public": False},
        {"name": "uses_extra_data", "label": "Uses extra data",
         "description": "(one of: true, false)", "required": False, "public": False},
    ]  # fmt: skip
    challenge = load_challenge(tmp_path / "evalai")
    assert [f.name for f in challenge.submission_fields] == [
        "method_name",
        "backbone",
        "uses_extra_data",
    ]


def test_fields_and_id_prefixes_work_on_every_database(database_url: str, tmp_path: Path) -> None:
    seeded = seed(tmp_path / "service", database_url=database_url)
    olga = authenticate(seeded.platform, seeded.tokens["olga"])
    installs.install(seeded.platform, olga, str(_challenge(tmp_path, FIELDS)))
    alice = authenticate(seeded.platform, seeded.tokens["alice"])
    receipt = submissions.submit(
        seeded.platform, alice, "tabular", None, io.BytesIO(CSV), "submission.csv",
        fields={"method": "ridge ✓", "description": "two\nlines"},
    )  # fmt: skip
    shown = submissions.status(seeded.platform, alice, receipt.submission[:8])
    assert shown.submission == receipt.submission
    assert shown.fields == {"method": "ridge ✓", "description": "two\nlines"}
    seeded.platform.close()


def test_a_public_value_cannot_plant_a_formula_in_the_board_csv(
    site: tuple[Seeded, str], sandbox: Sandbox, sandbox_settings: Settings
) -> None:
    seeded, url = site
    alice = authenticate(seeded.platform, seeded.tokens["alice"])
    submissions.submit(
        seeded.platform, alice, "tabular", None, io.BytesIO(CSV), "submission.csv",
        fields={"method": "=HYPERLINK(\"http://evil\")"},
    )  # fmt: skip
    run_queued(seeded, sandbox, sandbox_settings)
    with httpx.Client(base_url=url, headers=seeded.headers("bob"), timeout=60) as other:
        table = other.get("/api/v1/challenges/tabular/leaderboards/default?format=csv").text
    _, line = list(csv.reader(io.StringIO(table)))
    assert line[-2] == '\'=HYPERLINK("http://evil")'


def test_organizers_list_every_field_value_in_json_and_csv(site: tuple[Seeded, str]) -> None:
    seeded, url = site
    alice = authenticate(seeded.platform, seeded.tokens["alice"])
    submissions.submit(
        seeded.platform, alice, "tabular", None, io.BytesIO(CSV), "submission.csv",
        fields={"method": "-1 trick", "description": "private"},
    )  # fmt: skip
    with httpx.Client(base_url=url, headers=seeded.headers("olga"), timeout=60) as organizer:
        listed = organizer.get("/api/v1/challenges/tabular/submissions").json()
    assert listed["submissions"][0]["fields"] == {"method": "-1 trick", "description": "private"}
    env = dict(os.environ, PROCTOR_SERVER=url, PROCTOR_TOKEN=seeded.tokens["olga"])
    done = subprocess.run(
        [PROCTOR, "submissions", "tabular", "--csv"],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    header, line = list(csv.reader(io.StringIO(done.stdout)))
    assert header[-2:] == ["field.method", "field.description"]
    assert line[-2:] == ["'-1 trick", "private"]
