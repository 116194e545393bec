"""A participant's Dockerfile read without Docker: stages, ARG in FROM, the offered bases."""

from __future__ import annotations

import pytest

from proctor.environments.dockerfile import (
    check_bases,
    expand,
    ignored,
    image_name,
    parse_dockerfile,
    read_dockerignore,
)
from proctor.errors import ImageBuildError

OFFERED = ["proctor/reference", "python:3.10.1-buster"]


def test_continuations_comments_and_exec_forms_are_read() -> None:
    parsed = parse_dockerfile(
        "# syntax=docker/dockerfile:1\n"
        "FROM python:3.10.1-buster\n"
        "RUN echo a \\\n"
        "  # a comment inside the continuation\n"
        "  && echo b\n"
        'CMD ["python3", "run.py"]\n'
        "COPY --from=0 --chown=1000:1000 /x /y\n"
    )
    (stage,) = parsed.stages
    run, cmd, copy = stage.instructions
    assert (run.keyword, run.args, run.line) == ("RUN", "echo a && echo b", 3)
    assert cmd.exec_form == ("python3", "run.py")
    assert copy.flags == {"from": "0", "chown": "1000:1000"} and copy.args == "/x /y"


def test_a_global_arg_names_the_base() -> None:
    parsed = parse_dockerfile("ARG PY=3.10.1-buster\nFROM python:${PY} AS build\nRUN true\n")
    assert parsed.stages[0].base == "python:3.10.1-buster"
    assert parsed.stages[0].name == "build"
    assert check_bases(parsed, OFFERED) == ["python:3.10.1-buster"]


def test_a_base_no_one_offers_fails_with_the_list() -> None:
    parsed = parse_dockerfile("ARG BASE=ubuntu:22.04\nFROM $BASE\n")
    with pytest.raises(ImageBuildError) as caught:
        check_bases(parsed, OFFERED)
    message = str(caught.value)
    assert "line 2" in message and "ubuntu:22.04" in message
    assert "proctor/reference" in message and "python:3.10.1-buster" in message


def test_a_later_stage_may_start_from_an_earlier_one_only() -> None:
    parsed = parse_dockerfile(
        "FROM proctor/reference AS build\nRUN true\nFROM build\nFROM docker.io/library/python"
        ":3.10.1-buster\n"
    )
    assert check_bases(parsed, OFFERED) == ["proctor/reference:latest", 0, "python:3.10.1-buster"]
    ahead = parse_dockerfile("FROM later\nFROM proctor/reference AS later\n")
    with pytest.raises(ImageBuildError, match="FROM later is not a base"):
        check_bases(ahead, OFFERED)


@pytest.mark.parametrize(
    ("text", "fix"),
    [
        ("RUN true\n", "before any FROM"),
        ("FROM proctor/reference\nFETCH x\n", "unknown instruction"),
        ("FROM proctor/reference\nONBUILD RUN true\n", "ONBUILD"),
        ("FROM proctor/reference\nRUN --network=host curl x\n", "--network"),
        ("FROM proctor/reference\nRUN --mount=type=cache,target=/r pip install x\n", "--mount"),
        ("FROM proctor/reference\nRUN <<EOF\necho\nEOF\n", "here-documents"),
        ("FROM proctor/reference\nCOPY --chmod=755 a /a\n", "RUN chmod after the COPY"),
        ("# nothing\n", "no FROM"),
    ],
)
def test_what_cannot_be_built_is_refused_with_its_line(text: str, fix: str) -> None:
    with pytest.raises(ImageBuildError, match=fix):
        parse_dockerfile(text)


def test_names_and_variables_are_spelled_once() -> None:
    assert image_name("Python") == "python:latest"
    assert image_name("docker.io/library/python:3.10") == "python:3.10"
    assert image_name("proctor/reference") == "proctor/reference:latest"
    assert image_name("ghcr.io/x/y@sha256:ab") == "ghcr.io/x/y@sha256:ab"
    values = {"A": "1", "EMPTY": ""}
    assert expand("$A-${A}-${EMPTY:-d}-${A:+set}-${NONE}-\\$A", values) == "1-1-d-set--$A"


def test_dockerignore_rules_decide_in_order_folders_included() -> None:
    rules = read_dockerignore(
        "# comment\n\ndata\n!data/keep.txt\n**/*.pyc\n/build/\n?.tmp\n[ab].log\n"
    )
    assert ignored(rules, "data") and ignored(rules, "data/big/part1.bin")
    assert not ignored(rules, "data/keep.txt")
    assert ignored(rules, "x.pyc") and ignored(rules, "src/deep/y.pyc")
    assert ignored(rules, "build/out.o") and not ignored(rules, "src/build.py")
    assert ignored(rules, "a.tmp") and not ignored(rules, "ab.tmp")
    assert ignored(rules, "b.log") and not ignored(rules, "c.log")
    assert not ignored(rules, "team_code.py")
