"""What a Feishu/Lark custom bot accepts in one request: the body's bytes as sent, and the 20 KB it may take.

Apart from the channel (:mod:`prdigest.deliver.feishu`) because the card renderer sizes its cards by them, and a
renderer never imports a channel (docs/architecture.md, the layer rules).
"""

from __future__ import annotations

import json

#: Feishu's limit on one request: 20 KB, the UTF-8 bytes of the JSON body. Read as 20,000 bytes: whether
#: Feishu means 1,000 or 1,024 is not documented, and a card refused for its size is a failed row.
MAX_BODY = 20_000
#: What signing adds to a body: ``"timestamp":"<10 digits>","sign":"<44 base64 chars>",`` (75 bytes), and margin.
SIGN_RESERVE = 128
#: Bytes a card may take before it is signed.
CARD_BUDGET = MAX_BODY - SIGN_RESERVE


def encode(body: object) -> bytes:
    """The exact bytes sent: compact JSON, UTF-8 (Chinese text is 3 bytes a character, not a 6-byte escape)."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def body_bytes(body: object) -> int:
    """The size Feishu's 20 KB limit counts."""
    return len(encode(body))
