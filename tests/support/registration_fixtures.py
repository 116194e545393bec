"""A seeded platform whose toy challenge asks people to register (``registration:``).

``registered_toy`` writes the toy challenge again with a ``registration:`` block and a terms
page, and installs it as a new version (the organizer ``olga`` installs it): the seeded
users (``service_seed``) then meet registration as participants of a served challenge would.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import yaml
from service_seed import Seeded
from toy_challenge import make_challenge

from proctor.services.platform import installs
from proctor.services.platform.accounts import authenticate

TERMS = "# Terms\n\nShare no hidden data. One account per person.\n"


def registered_toy(seeded: Seeded, root: Path, **registration: Any) -> str:
    """Install the toy challenge with ``registration: {...}`` and ``pages/terms.md``.

    Returns the terms' version (the sha256 of the terms file).
    """
    bundle = make_challenge(root / "toy")
    (bundle / "pages").mkdir()
    (bundle / "pages" / "terms.md").write_text(TERMS)
    spec = yaml.safe_load((bundle / "challenge.yaml").read_text())
    spec["registration"] = {"terms": "pages/terms.md", **registration}
    (bundle / "challenge.yaml").write_text(yaml.safe_dump(spec))
    olga = authenticate(seeded.platform, seeded.tokens["olga"])
    installs.install(seeded.platform, olga, str(bundle))
    return hashlib.sha256(TERMS.encode()).hexdigest()
