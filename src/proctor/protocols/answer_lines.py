"""Answers appended to one shared file, one line per record (PhysioNet 2015-2017 ``answers.txt``).

``next.sh RECORD`` appends ``RECORD,ANSWER`` to ``answers.txt`` in its working directory. Cases
of one entry may run at once and append to the same file; a case's answer is the last line
that starts with ``RECORD,`` once its run is over. The file is searched as bytes from its end,
so collecting stays linear in the file even when thousands of records have appended to it.
"""

from __future__ import annotations

from pathlib import Path


def last_line(data: bytes, record: str) -> str | None:
    """The last line of ``data`` starting ``RECORD,``, without its line ending; None if none."""
    key = record.encode("utf-8") + b","
    found = data.rfind(b"\n" + key)
    if found >= 0:
        start = found + 1
    elif data.startswith(key):
        start = 0
    else:
        return None
    end = data.find(b"\n", start)
    line = data[start:] if end < 0 else data[start:end]
    return line.rstrip(b"\r").decode("utf-8", errors="replace").strip()


def line_record(output: Path) -> str | None:
    """The record named by a stored answer (``RECORD,ANSWER``), or None."""
    text = output.read_text(encoding="utf-8", errors="replace").strip()
    record, comma, _ = text.partition(",")
    return record.strip() if comma and "\n" not in text else None


def compare_lines(output: Path, answers: Path) -> str | None:
    """None when the record's stored line equals its line in the shipped shared answers."""
    record = line_record(output)
    if record is None:
        return "the output is not one line RECORD,ANSWER"
    got = output.read_text(encoding="utf-8", errors="replace").strip()
    expected = last_line(answers.read_bytes(), record)
    if expected is None:
        return f"the shipped {answers.name} has no line for {record}"
    if _fields(got) == _fields(expected):
        return None
    return f"wrote {got!r} where the shipped {answers.name} says {expected!r}"


def _fields(line: str) -> list[str]:
    return [field.strip() for field in line.split(",")]
