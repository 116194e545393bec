"""The docs stay complete: a short README, every page in the site, every command and setting.

``mkdocs build --strict`` (in ``make check``) catches broken links; these tests catch what a
link checker cannot: a page left out of the navigation, a command or option added to the CLI
without its entry in ``docs/cli.md``, a ``PROCTOR_*`` setting without its row in
``docs/settings.md``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import typer
import yaml
from paths import REPO
from typer.testing import CliRunner

from proctor.cli.main import build_app

ROOT = REPO
DOCS = ROOT / "docs"
README_LIMIT = 8192
SECTION_HEADING = re.compile(r"^### `(proctor(?: [a-z0-9-]+)*)`$", re.MULTILINE)


def _nav_pages(nav: Any) -> Iterator[str]:
    """Every page file named anywhere in mkdocs.yml's ``nav`` (titles, sections, bare files)."""
    if isinstance(nav, str):
        yield nav
    elif isinstance(nav, list):
        for item in nav:
            yield from _nav_pages(item)
    elif isinstance(nav, dict):
        for value in nav.values():
            yield from _nav_pages(value)


def _commands() -> dict[str, Any]:
    """Every leaf command of the whole ``proctor`` app by full path (``proctor env lock``)."""
    found: dict[str, Any] = {}

    def walk(command: Any, path: list[str]) -> None:
        children = getattr(command, "commands", None)
        if children is None:
            found[" ".join(path)] = command
            return
        for name, child in children.items():
            walk(child, [*path, name])

    walk(typer.main.get_group(build_app()), ["proctor"])
    return found


def _cli_sections() -> dict[str, str]:
    """docs/cli.md's reference sections: ``### `proctor PATH``` heading → its text."""
    text = (DOCS / "cli.md").read_text(encoding="utf-8")
    heads = list(SECTION_HEADING.finditer(text))
    ends = [head.start() for head in heads[1:]] + [len(text)]
    return {head.group(1): text[head.end() : end] for head, end in zip(heads, ends, strict=True)}


COMMANDS = _commands()
SECTIONS = _cli_sections()


def test_the_readme_is_a_front_door_of_at_most_8_kib() -> None:
    size = len((ROOT / "README.md").read_bytes())
    assert size <= README_LIMIT, f"README.md is {size} bytes; move detail into docs/ pages"


def test_every_docs_page_is_in_the_site_navigation() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    in_nav = set(_nav_pages(config["nav"]))
    pages = {page.relative_to(DOCS).as_posix() for page in DOCS.rglob("*.md")}
    assert pages, "no pages found under docs/"
    missing = sorted(page for page in pages - in_nav if not page.startswith("decisions/0"))
    assert not missing, f"add these pages to mkdocs.yml's nav: {missing}"
    assert not in_nav - pages, f"mkdocs.yml's nav names missing pages: {sorted(in_nav - pages)}"


def test_every_decision_record_is_listed_in_the_decisions_index() -> None:
    index = (DOCS / "decisions" / "index.md").read_text(encoding="utf-8")
    records = sorted(page.name for page in (DOCS / "decisions").glob("0*.md"))
    assert records, "no decision records under docs/decisions/"
    unlisted = [name for name in records if f"]({name})" not in index]
    assert not unlisted, f"link these records from docs/decisions/index.md: {unlisted}"
    for name in records:
        head = (DOCS / "decisions" / name).read_text(encoding="utf-8").splitlines()[:3]
        assert re.match(r"Date: \d{4}-\d{2}-\d{2}", head[2]), f"{name}: line 3 gives its date"


def test_the_walk_sees_every_command_proctor_help_lists() -> None:
    shown = CliRunner().invoke(build_app(), ["--help"], terminal_width=200)
    assert shown.exit_code == 0, shown.output
    top_level = {path.split()[1] for path in COMMANDS}
    for name in top_level:
        assert re.search(rf"\b{re.escape(name)}\b", shown.output), name
    assert {"run", "serve", "submit", "env", "score", "challenge"} <= top_level


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_every_command_has_its_section_in_docs_cli(path: str) -> None:
    assert path in SECTIONS, f"docs/cli.md has no '### `{path}`' section"


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_every_option_of_a_command_is_in_its_section(path: str) -> None:
    section = SECTIONS.get(path, "")
    names = [
        name
        for param in COMMANDS[path].params
        if type(param).__name__.endswith("Option")
        for name in (*param.opts, *param.secondary_opts)
    ]
    missing = [name for name in names if f"`{name}`" not in section]
    assert not missing, f"docs/cli.md's section on {path} does not name {missing}"


def test_every_cli_section_names_a_real_command() -> None:
    stale = sorted(set(SECTIONS) - set(COMMANDS))
    assert not stale, f"docs/cli.md documents commands that do not exist: {stale}"


def _settings_read() -> list[str]:
    source = (ROOT / "src" / "proctor" / "settings.py").read_text(encoding="utf-8")
    return sorted(set(re.findall(r"PROCTOR_[A-Z0-9_]*[A-Z0-9]", source)))


def test_settings_py_reads_the_settings_this_test_expects() -> None:
    assert {"PROCTOR_WORK_ROOT", "PROCTOR_DATABASE_URL", "PROCTOR_TEAM_JOBS"} <= set(
        _settings_read()
    )


@pytest.mark.parametrize("name", _settings_read())
def test_every_setting_is_in_docs_settings(name: str) -> None:
    table = (DOCS / "settings.md").read_text(encoding="utf-8")
    rows = [line for line in table.splitlines() if line.startswith("| ")]
    assert any(f"`{name}`" in row for row in rows), f"docs/settings.md has no table row for {name}"
