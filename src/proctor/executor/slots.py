"""Transitional: slots moved to ``proctor.sandbox.slots`` and are claimed by ``Sandbox.session()``.

Kept only because ``services/evaluate.py`` still imports ``claim_slot`` from here; delete this
module once it enters ``sandbox.session()`` instead.
"""

from proctor.sandbox.slots import claim_slot

__all__ = ["claim_slot"]
