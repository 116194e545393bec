r"""Text that came from an entry (its output, its file names) shown as plain, visible text.

Rich markup in such text is printed, not interpreted (``[/]`` in a log must not crash the
display or restyle it), and control characters are made visible (``\x1b``), so an entry
cannot reach the terminal with hyperlinks, title changes, screen clears or colours.
"""

from __future__ import annotations

import re

from rich.text import Text

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def visible(text: str) -> str:
    r"""``text`` with every control character but newline and tab written as ``\xNN``."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def plain(text: str, style: str = "") -> Text:
    """A Rich text of ``text``, made visible, that no markup in it can change."""
    return Text(visible(text), style=style)
