"""A failed submission's page leads with the failure's telling line and whose it is.

The toy challenge, an entry whose quiz fails with a Python error, the real sandbox and job
function; the page is read over HTTP as the team's member, signed in by the login form.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from service_seed import Seeded, run_queued, seed, served, submit
from toy_challenge import HIDDEN, make_entry, make_exam_entry

from proctor.sandbox.bwrap import BwrapSandbox
from proctor.settings import Settings

FAILING_NEXT = """#!/bin/sh
echo 'Traceback (most recent call last):' >&2
echo '  File "model.py", line 180' >&2
echo "SyntaxError: '(' was never closed" >&2
exit 1
"""


@pytest.fixture
def failed(tmp_path: Path, sandbox: BwrapSandbox, sandbox_settings: Settings) -> Iterator[Seeded]:
    seeded = seed(tmp_path / "service")
    submit(seeded, "alice", make_entry(tmp_path / "entry", next_sh=FAILING_NEXT))
    run_queued(seeded, sandbox, sandbox_settings)
    yield seeded
    seeded.platform.close()


def _page_text(seeded: Seeded, path: str) -> str:
    with served(seeded.app) as url, httpx.Client(base_url=url, timeout=60) as browser:
        login = browser.get("/login").text
        csrf = re.search(r'name="csrf" value="([^"]+)"', login)
        assert csrf
        browser.post("/login", data={"token": seeded.tokens["alice"], "csrf": csrf.group(1)})
        answer = browser.get(path)
        assert answer.status_code == 200, answer.text
        return answer.text


def test_the_banner_of_a_failed_submission_names_the_error_and_its_owner(failed: Seeded) -> None:
    page = _page_text(failed, f"/submissions/{failed.submissions[0]}")
    banner = re.search(r'id="failure-banner".*?</div>', page, re.S)
    assert banner, page
    text = html.unescape(re.sub(r"<[^>]+>", " ", banner.group(0)))
    assert "SyntaxError: '(' was never closed" in text
    assert "your entry" in text and "quiz" in text
    assert page.index("failure-banner") < page.index('id="stages"')


REVERSED = f"""  {HIDDEN[0]})
    n=$(cut -d' ' -f4 "$PROCTOR_DATA/$1.hea"); i=0; : > "$1.vec"
    while [ $i -lt $n ]; do
      if [ $i -lt $((n / 2)) ]; then echo 0.900; else echo 0.100; fi >> "$1.vec"; i=$((i + 1))
    done ;;"""
"""One hidden record answered backwards: an AUPRC below 1, its interval with width."""


@pytest.fixture
def scored(tmp_path: Path, sandbox: BwrapSandbox, sandbox_settings: Settings) -> Iterator[Seeded]:
    seeded = seed(tmp_path / "service")
    submit(seeded, "alice", make_exam_entry(tmp_path / "entry", REVERSED))
    run_queued(seeded, sandbox, sandbox_settings)
    yield seeded
    seeded.platform.close()


def test_scores_are_a_metric_by_task_table_with_intervals_beside_them(scored: Seeded) -> None:
    page = _page_text(scored, f"/submissions/{scored.submissions[0]}")
    table = re.search(r'<table id="scores">.*?</table>', page, re.S)
    assert table, page
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", table.group(0))).split())
    assert "task arousal" in text
    assert "ci95" not in text  # bounds sit beside auprc, not as metrics of their own
    # the interval beside its metric, with the number of cases it stands on
    assert re.search(r"auprc .*? \d\.\d+ \[\d\.\d+, \d\.\d+\] n=\d+ ", text), text
    assert re.search(r"records a count \d+ ", text), text
    assert "failure-banner" not in page
    assert '<th scope="col">cases</th>' in page  # the quiz and exam have cases
