"""Payload digests in the form WARC files carry them (``WARC-Payload-Digest``).

One place for the value three parts of the app must agree on: the capture writer (through
warcio's digester, which writes this same form), its revisit lookups, and the indexer,
which uses a record's payload digest as its page's content hash and computes it only for
a record that has none. Standard library only: the indexer's worker process imports it.
"""

from __future__ import annotations

import base64
import hashlib


def payload_digest(data: bytes) -> str:
    """``data``'s digest as warcio writes it: ``sha1:<base32>``."""
    digest = hashlib.sha1(data, usedforsecurity=False).digest()
    return "sha1:" + base64.b32encode(digest).decode("ascii")


__all__ = ["payload_digest"]
