"""``submission_fields:``: what a participant may tell about a submission beside its entry.

Kaggle, Codabench and EvalAI ask for a method's name, a description, a link to the code or the
paper. A challenge declares its own fields, each optional unless ``required``; a ``public``
field is shown on the leaderboards beside the submission, the others only to its team and the
organizers. Values are plain text (a ``url`` must be ``http://`` or ``https://``)::

    submission_fields:
      - {name: method, label: Method name, public: true, max_chars: 80}
      - {name: description, kind: long_text}
      - {name: code_url, label: Code, kind: url, public: true}
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from proctor.spec.protocols import LocatedError, Strict

FieldName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,31}$")]
MAX_FIELDS = 16
"""Fields a challenge may declare at most."""
DEFAULT_CHARS = {"text": 200, "long_text": 4000, "url": 500}
"""The longest value of each kind unless ``max_chars`` says otherwise."""


class SubmissionField(Strict):
    """One field of the submission form: its name (a form key), label, kind and visibility.

    ``kind``: ``text`` (one line), ``long_text`` (several lines) or ``url`` (http or https);
    ``max_chars``: the longest value (default by kind, ``DEFAULT_CHARS``); ``public``: shown on
    the leaderboards; ``required``: a submission without it is refused.
    """

    name: FieldName
    label: str = Field(default="", max_length=80)
    description: str = Field(default="", max_length=500)
    kind: Literal["text", "long_text", "url"] = "text"
    required: bool = False
    public: bool = False
    max_chars: int | None = Field(default=None, gt=0, le=20_000, strict=True)

    @property
    def shown_label(self) -> str:
        """The label, or the name when the challenge gave none."""
        return self.label or self.name.replace("_", " ")

    @property
    def limit(self) -> int:
        """The longest value taken, in characters."""
        return self.max_chars or DEFAULT_CHARS[self.kind]


def check_field_names(fields: tuple[SubmissionField, ...]) -> None:
    """Refuse a name used twice, naming the YAML path of the second."""
    seen: set[str] = set()
    for index, field in enumerate(fields):
        if field.name in seen:
            raise LocatedError(
                f"field name {field.name!r} is used twice: give each field its own name",
                f"submission_fields[{index}].name",
            )
        seen.add(field.name)
