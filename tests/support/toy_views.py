"""The toy challenge as the page tests serve it: pages with hostile markup, scored next.sh."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from service_seed import Seeded
from toy_challenge import make_challenge

from proctor.services.platform import installs
from proctor.services.platform.accounts import authenticate

PAGES = {
    "overview": "# About the toy\n\nFind the **arousals**.\n\n<script>alert(1)</script>\n",
    "data": "<h2>Records</h2><p onclick='x()'>Two public records, three hidden.</p>",
}


def scored_next(low: str, high: str, flip_every: int) -> str:
    """A next.sh answering the quiz right; on hidden records ``low`` then ``high``, every
    ``flip_every``-th value swapped (so teams score differently)."""
    return f"""#!/bin/sh
case "$1" in
  tr*) lo=0.100; hi=0.900; flip=100000 ;;
  *) lo={low}; hi={high}; flip={flip_every} ;;
esac
n=$(cut -d' ' -f4 "$PROCTOR_DATA/$1.hea")
i=0
: > "$1.vec"
while [ $i -lt $n ]; do
  v=$lo; [ $i -ge $((n / 2)) ] && v=$hi
  if [ $((i % flip)) -eq $((flip - 1)) ]; then if [ $v = $lo ]; then v=$hi; else v=$lo; fi; fi
  echo $v >> "$1.vec"
  i=$((i + 1))
done
"""


def reinstall(seeded: Seeded, root: Path, **changes: Any) -> None:
    """Install the toy challenge again with ``changes`` to its challenge.yaml and its pages."""
    bundle = make_challenge(root / "toy", case_s=20)
    spec = yaml.safe_load((bundle / "challenge.yaml").read_text())
    (bundle / "pages").mkdir()
    (bundle / "pages" / "overview.md").write_text(PAGES["overview"])
    (bundle / "pages" / "data.html").write_text(PAGES["data"])
    spec["pages"] = {"overview": "pages/overview.md", "data": "pages/data.html"}
    spec.update(changes)
    (bundle / "challenge.yaml").write_text(yaml.safe_dump(spec))
    olga = authenticate(seeded.platform, seeded.tokens["olga"])
    installs.install(seeded.platform, olga, str(bundle))
