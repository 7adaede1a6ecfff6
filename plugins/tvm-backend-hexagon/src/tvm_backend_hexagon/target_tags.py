"""The seed's module path of this backend's target tags (``tvm.backend.hexagon.target_tags``).

The tags are data in :mod:`.tags` (the seed's own under ``SEED_TAGS``, ours under
``EXTRA_TAGS``); they are registered when the backend loads, so importing this module
registers nothing.
"""

from __future__ import annotations

from .tags import EXTRA_TAGS, SEED_TAGS, TAGS

__all__ = ["EXTRA_TAGS", "SEED_TAGS", "TAGS"]
