"""Where a YAML path of ``challenge.yaml`` lies in the file, and what the parser read there.

A slip inside a flow mapping is valid YAML that means something else: ``{mae: {m=12}}`` is a
mapping whose one key is the text ``m=12``, with no value. The model then refuses a key
``m=12``, which names no line. :func:`seen_at` finds the node a problem's YAML path names in
the parsed file and says its line and column as the parser counts them, and what the parser
read there when it holds a ``=`` (a key and value written without ``: ``).
"""

from __future__ import annotations

import re

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from proctor.formats.bounded_yaml import where

INDEX = re.compile(r"\[(\d+)\]\.?")


def node_at(root: Node, location: str) -> tuple[Node, Node | None, bool]:
    """The node a YAML path (``tasks[0].scorer.metrics``) names, its key node, and if found.

    The key is None for a list item or the root. When the file does not hold the whole path
    (a missing key), the deepest node on it is returned, and False.
    """
    node, key, rest = root, None, location
    while rest:
        index = INDEX.match(rest)
        if index is not None:
            if not isinstance(node, SequenceNode) or int(index[1]) >= len(node.value):
                break
            node, key, rest = node.value[int(index[1])], None, rest[index.end() :]
            continue
        if not isinstance(node, MappingNode):
            break
        named = [
            (k, v)
            for k, v in node.value
            if isinstance(k, ScalarNode)
            and (rest == k.value or rest.startswith((f"{k.value}.", f"{k.value}[")))
        ]
        if not named:
            break
        key, node = max(named, key=lambda pair: len(pair[0].value))
        rest = rest[len(key.value) :].removeprefix(".")
    return node, key, not rest


def seen_at(root: Node | None, location: str, *, the_key: bool) -> str:
    """``line L, column C`` of a YAML path, and what the parser read there if it holds ``=``.

    The key's place when ``the_key`` (an unknown key), else the value's; a path the file
    does not hold (a missing key) is placed at the deepest node on it; "" for no path.
    """
    if root is None or not location:
        return ""
    node, key, whole = node_at(root, location)
    shown = key if the_key and whole and key is not None else node
    said = where(shown.start_mark)
    slip = _key_slip(shown, node) if shown is key else _slip(shown)
    if slip is not None:
        text, role = slip
        name, _, value = text.partition("=")
        said += (
            f": the YAML parser read `{text}` as {role}; write `{name.strip()}: "
            f"{_balanced(value.strip())}` (a colon and a space) for a key and its value"
        )
    return said


def _balanced(value: str) -> str:
    """``value`` without closing brackets it never opened (``12)`` → ``12``)."""
    while (
        value
        and value[-1] in ")]}"
        and value.count(value[-1]) > value.count({")": "(", "]": "[", "}": "{"}[value[-1]])
    ):
        value = value[:-1]
    return value


def _key_slip(key: Node, value: Node) -> tuple[str, str] | None:
    """A key holding ``=``, and what the parser made of it (a key, with no value or one)."""
    if not _plain_with_equals(key):
        return None
    empty = isinstance(value, ScalarNode) and value.value == ""
    return str(key.value), "a key with no value" if empty else "a key"


def _slip(node: Node) -> tuple[str, str] | None:
    """A plain scalar holding ``=`` at or just inside ``node``, and what the parser made of it."""
    if _plain_with_equals(node):
        return str(node.value), "a text"
    if isinstance(node, MappingNode):
        for key, value in node.value:
            found = _key_slip(key, value)
            if found is not None:
                return found
            if _plain_with_equals(value):
                return str(value.value), "a text"
    return None


def _plain_with_equals(node: Node) -> bool:
    return isinstance(node, ScalarNode) and not node.style and "=" in str(node.value)
