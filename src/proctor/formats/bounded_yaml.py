"""YAML read with bounds: a file's bytes, the size its aliases expand to, its nesting depth.

Every YAML file a participant or a bundle author writes (a ``metadata``, a ``scores.txt``, a
``competition.yaml``, a ``challenge.yaml``) is read here. The text is refused over
``max_bytes`` before it is parsed. While the document is composed (libyaml's C parser when
PyYAML has it, PyYAML's own parser otherwise), every node counts, and an alias counts as the
whole node it names: a document that would expand to more than ``max_nodes`` nodes (a
"billion laughs") is refused before any value is built, as is one nested deeper than
``max_depth`` or an alias inside the node it names (a loop). What is built is then no larger
than ``max_nodes`` values, however it is walked or printed.

:class:`BoundedLoader` is PyYAML's safe loader so bounded; subclasses add constructors
(``add_constructor``) as for any PyYAML loader. Duplicate keys keep the last value, as PyYAML
reads them. Every failure is a :class:`YamlDocumentError` (a ``ValueError``) whose message
says what is wrong and, for a syntax error, the line and column the parser reported
(:func:`parser_said`), for the caller to name the file.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.events import AliasEvent, Event
from yaml.nodes import Node
from yaml.parser import Parser
from yaml.reader import Reader
from yaml.resolver import Resolver
from yaml.scanner import Scanner

MAX_NODES = 100_000
"""Nodes (keys and values) a document may expand to, each alias counted as the node it
names: far above what a hand-written competition file holds."""
MAX_DEPTH = 100
"""Collections nested in one another at most (real files nest fewer than 15)."""
BUNDLE_MAX_BYTES = 4 * 1024**2
"""A bundle's YAML file (``competition.yaml``, EvalAI's ``challenge_config.yaml``) at most."""


@dataclass(frozen=True)
class YamlBounds:
    """What a document may take: ``max_bytes`` of text, ``max_nodes`` expanded, ``max_depth``."""

    max_bytes: int = BUNDLE_MAX_BYTES
    max_nodes: int = MAX_NODES
    max_depth: int = MAX_DEPTH


BUNDLE_BOUNDS = YamlBounds()
"""A bundle author's YAML file: 4 MiB, 100,000 values once aliases are expanded, 100 levels."""


class YamlDocumentError(ValueError):
    """The text is no YAML document, or one over its bounds; the message says which."""


class YamlBoundsError(YamlDocumentError):
    """The file or its document is over its bounds (bytes, expanded values, depth, a loop)."""


class _BoundedComposer(Composer):
    """PyYAML's composer counting nodes as they would be once aliases are expanded."""

    bounds = BUNDLE_BOUNDS

    if TYPE_CHECKING:

        def check_event(self, *choices: type[Event]) -> bool: ...
        def peek_event(self) -> Any: ...

    def __init__(self) -> None:
        super().__init__()
        self._expanded = 0
        self._depth = 0
        self._sizes: dict[int, tuple[Node | None, int]] = {}

    def _count(self, nodes: int) -> None:
        self._expanded += nodes
        if self._expanded > self.bounds.max_nodes:
            raise YamlBoundsError(
                f"the document expands to more than {self.bounds.max_nodes} values "
                "(aliases counted as what they repeat): write it out plainly, smaller"
            )

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        """The next node, counted (an alias as the size of the node it names)."""
        if self.check_event(AliasEvent):
            event = self.peek_event()
            named = self.anchors.get(event.anchor)
            if named is not None:
                known = self._sizes.get(id(named))
                if known is None:
                    raise YamlBoundsError(
                        f"the alias *{event.anchor} (line {event.start_mark.line + 1}) is "
                        "inside the node it names: a loop"
                    )
                self._count(known[1])
            return super().compose_node(parent, index)
        if self._depth >= self.bounds.max_depth:
            line = self.peek_event().start_mark.line + 1
            raise YamlBoundsError(
                f"nested more than {self.bounds.max_depth} levels deep (line {line})"
            )
        start = self._expanded
        self._count(1)
        self._depth += 1
        node = super().compose_node(parent, index)
        self._depth -= 1
        self._sizes[id(node)] = (node, self._expanded - start)
        return node


class PureBoundedLoader(Reader, Scanner, Parser, _BoundedComposer, SafeConstructor, Resolver):
    """PyYAML's pure-Python safe loader, with :class:`YamlBounds` held."""

    def __init__(self, stream: str) -> None:
        Reader.__init__(self, stream)
        Scanner.__init__(self)
        Parser.__init__(self)
        _BoundedComposer.__init__(self)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)

    def dispose(self) -> None:
        """Nothing to release (libyaml's parser has its state to free)."""


if getattr(yaml, "__with_libyaml__", False):
    from yaml._yaml import CParser

    class BoundedLoader(_BoundedComposer, CParser, SafeConstructor, Resolver):
        """PyYAML's safe loader on libyaml's parser, with :class:`YamlBounds` held."""

        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            _BoundedComposer.__init__(self)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)

else:  # pragma: no cover - PyYAML built without libyaml

    class BoundedLoader(PureBoundedLoader):  # type: ignore[no-redef]
        """PyYAML's safe loader, with :class:`YamlBounds` held (no libyaml here)."""


AnyLoader = type[BoundedLoader] | type[PureBoundedLoader]
"""A loader :func:`load_text` takes: a subclass of either, constructors added."""


def load_text(
    text: str, bounds: YamlBounds = BUNDLE_BOUNDS, loader: AnyLoader = BoundedLoader
) -> Any:
    """The one document ``text`` holds, read within ``bounds`` by ``loader``.

    A BOM and CRLF line endings are accepted. ``YamlDocumentError`` for text over
    ``bounds.max_bytes`` (UTF-8), text that is no YAML, or a document over the bounds.
    """
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > bounds.max_bytes:
        raise YamlBoundsError(_too_large(size, bounds.max_bytes))
    reader = loader(text.removeprefix("\ufeff").replace("\r\n", "\n"))
    reader.bounds = bounds
    try:
        return reader.get_single_data()
    except yaml.YAMLError as err:
        raise YamlDocumentError(parser_said(err)) from None
    except RecursionError:
        raise YamlBoundsError("nested too deeply to be read") from None
    finally:
        reader.dispose()


def compose_file(path: Path, bounds: YamlBounds = BUNDLE_BOUNDS) -> Node | None:
    """The node tree of the file ``path``'s one document, each node with its line and column.

    Read within ``bounds`` as :func:`read_file` reads it; None for an empty document.
    """
    text = read_capped(path, bounds.max_bytes).decode("utf-8")
    reader = BoundedLoader(text.removeprefix("\ufeff").replace("\r\n", "\n"))
    reader.bounds = bounds
    try:
        return reader.get_single_node()
    except yaml.YAMLError as err:
        raise YamlDocumentError(parser_said(err)) from None
    finally:
        reader.dispose()


def where(mark: Any) -> str:
    """A parser's mark as people count: ``line 27, column 7`` (both from 1)."""
    return f"line {mark.line + 1}, column {mark.column + 1}"


def parser_said(err: yaml.YAMLError) -> str:
    """What the YAML parser reported, and where, as it reported it, without its stream name.

    e.g. ``line 27, column 7: did not find expected ',' or '}' (while parsing a flow mapping
    that starts at line 26, column 16)``.
    """
    if not isinstance(err, yaml.MarkedYAMLError) or err.problem_mark is None:
        return str(err)
    said = f"{where(err.problem_mark)}: {err.problem or 'not valid YAML'}"
    if err.context:
        starts = f" that starts at {where(err.context_mark)}" if err.context_mark else ""
        said += f" ({err.context}{starts})"
    return said


def load_bytes(
    data: bytes, bounds: YamlBounds = BUNDLE_BOUNDS, loader: AnyLoader = BoundedLoader
) -> Any:
    """The one document UTF-8 ``data`` holds, as :func:`load_text` reads it."""
    if len(data) > bounds.max_bytes:
        raise YamlBoundsError(_too_large(len(data), bounds.max_bytes))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise YamlDocumentError(f"not UTF-8 text ({err})") from None
    return load_text(text, bounds, loader)


def read_capped(path: Path, max_bytes: int) -> bytes:
    """The bytes of the regular file ``path``, never reading past ``max_bytes`` + 1.

    A link is not followed. ``YamlDocumentError`` for a file larger than ``max_bytes`` (no
    byte of it parsed) or one that is no regular file; ``OSError`` when it cannot be opened.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise YamlDocumentError("not a regular file")
        if info.st_size > max_bytes:
            raise YamlBoundsError(_too_large(info.st_size, max_bytes))
        data = file.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise YamlBoundsError(_too_large(len(data), max_bytes))
    return data


def read_file(
    path: Path, bounds: YamlBounds = BUNDLE_BOUNDS, loader: AnyLoader = BoundedLoader
) -> Any:
    """The one document of the UTF-8 file ``path`` (a BOM allowed), read within ``bounds``.

    ``YamlDocumentError`` as :func:`load_text` raises it, and for a file over the bounds
    before it is read; ``OSError`` when it cannot be opened.
    """
    return load_bytes(read_capped(path, bounds.max_bytes), bounds, loader)


def _too_large(size: int, limit: int) -> str:
    return f"{size} bytes, over the {limit} a YAML file may take here: keep it smaller"
