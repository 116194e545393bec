"""The values of a challenge's ``submission_fields``: checked on submit, shown by visibility.

A form or API upload sends each value as the text field ``field.NAME`` (``FORM_PREFIX``);
``proctor submit --field NAME=VALUE`` does the same. Values are stored as given (trimmed) and
shown as text: the pages escape them, and only an ``http(s)://`` value of a ``url`` field
becomes a link. A public field's value is on the boards; the others only on the team's and
the organizers' pages.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping

from proctor.errors import UsageError
from proctor.spec import Challenge
from proctor.spec.submission_fields import SubmissionField

FORM_PREFIX = "field."
"""The form key of a field's value: ``field.method``."""


def from_form(form: Mapping[str, str]) -> dict[str, str]:
    """The field values of a form's text fields (``field.NAME`` keys), by name."""
    return {
        key[len(FORM_PREFIX) :]: value for key, value in form.items() if key.startswith(FORM_PREFIX)
    }


def checked(challenge: Challenge, given: Mapping[str, str]) -> dict[str, str]:
    """The values to store, trimmed and without the empty ones; ``UsageError`` says what to fix.

    Refused: a name the challenge does not declare, a required field left empty, a value over
    its ``max_chars``, control characters (newlines and tabs only in ``long_text``), a ``url``
    that is not ``http://`` or ``https://``.
    """
    declared = {field.name: field for field in challenge.submission_fields}
    unknown = sorted(set(given) - set(declared))
    if unknown:
        known = ", ".join(declared) or "none"
        raise UsageError(
            f"this challenge has no submission field {unknown[0]!r} (its fields: {known})"
        )
    values = {}
    for name, field in declared.items():
        value = given.get(name, "").strip()
        if not value:
            if field.required:
                raise UsageError(f"the submission field {name!r} is required: give it a value")
            continue
        _check(field, value)
        values[name] = value
    return values


def _check(field: SubmissionField, value: str) -> None:
    if len(value) > field.limit:
        raise UsageError(
            f"the submission field {field.name!r} holds {len(value)} characters, over the "
            f"{field.limit} it may hold: shorten it"
        )
    allowed = "\n\t" if field.kind == "long_text" else ""
    if any(
        unicodedata.category(c) == "Cc" and c not in allowed for c in value.replace("\r\n", "\n")
    ):
        raise UsageError(
            f"the submission field {field.name!r} holds control characters: send plain text"
        )
    if field.kind == "url" and not value.lower().startswith(("http://", "https://")):
        raise UsageError(
            f"the submission field {field.name!r} must be an http:// or https:// address"
        )


def encoded(values: Mapping[str, str]) -> str | None:
    """The values as stored in the submission's row (None when there are none)."""
    return json.dumps(dict(values), ensure_ascii=False) if values else None


def stored(text: str | None) -> dict[str, str]:
    """The values of a submission's row, by name."""
    return dict(json.loads(text)) if text else {}


def public(challenge: Challenge, values: Mapping[str, str]) -> dict[str, str]:
    """The values of the challenge's public fields, in its order."""
    return {
        field.name: values[field.name]
        for field in challenge.submission_fields
        if field.public and field.name in values
    }
