"""How strong a secret must be to key an HMAC: one rule for every secret the product is given.

The reader-link secret (``DIGEST_WEB_SECRET``) and the edition-record seal (``DIGEST_RECORD_SECRET``) are both
HMAC keys, and an HMAC is only as strong as its key: a short one, or a long one of few different characters
(``aaaa…``, ``abab…``), can be guessed offline from one signed value. Length and variety are not enough either:
``0123456789abcdefghijklmnopqrstuv`` and ``abcdefghij`` three times pass both and are guessed at once. So a secret
is also measured by :func:`entropy_bits`, what is left once runs and repeats are read as one step each. Both
settings are refused, before anything runs, unless the secret passes :func:`check_secret`; the message names the
setting, never the secret.
"""

from __future__ import annotations

import math
import string

from prdigest.kernel.errors import ConfigError

#: Shorter secrets are refused: ``secrets.token_urlsafe(32)`` gives 43 characters.
MIN_SECRET = 32
#: ... and so are secrets of few different characters, whatever their length (``aaaa…``, ``abab…``). Six, not ten:
#: a random 32-digit hex token has fewer than ten different digits about one time in 10,000 (CI drew one), fewer than
#: six about one time in 3 x 10^12; a secret of few characters repeated is refused by :func:`entropy_bits` anyway.
MIN_DISTINCT = 6
#: ... and so are secrets with less than this many bits by :func:`entropy_bits` (``token_urlsafe(32)``: ~250; a
#: 32-digit hex token: ~128, less a few steps for an accidental run).
MIN_BITS = 80
#: How to make a good one, for the messages.
HOW = "python3 -c 'import secrets; print(secrets.token_urlsafe(32))'"


def check_secret(secret: str, name: str) -> None:
    """Raise :class:`ConfigError` naming ``name`` unless ``secret`` is long and varied enough to key an HMAC:
    at least :data:`MIN_SECRET` characters, :data:`MIN_DISTINCT` different ones, and :data:`MIN_BITS` by
    :func:`entropy_bits` (a character repeated through the secret is a copy there, one step; a bare count of the
    commonest character also refused random hex tokens, one 32-digit token in ~500)."""
    if len(secret) < MIN_SECRET or len(set(secret)) < MIN_DISTINCT:
        raise ConfigError(
            f"{name} is {len(secret)} characters of {len(set(secret))} different kinds: use at least {MIN_SECRET} "
            f"random ones, at least {MIN_DISTINCT} different ({HOW})")
    bits = entropy_bits(secret)
    if bits < MIN_BITS:
        raise ConfigError(f"{name} is {len(secret)} characters but guessable (about {bits:.0f} bits once its runs and "
                          f"repeats are counted as one step each; at least {MIN_BITS} needed): use random ones ({HOW})")


#: Character classes and how many characters each offers a guesser.
_CLASSES = ((string.digits, 10), (string.ascii_lowercase, 26), (string.ascii_uppercase, 26))


def entropy_bits(secret: str) -> float:
    """An estimate of the bits a guesser must find: the secret read left to right in steps, a step being one
    character, a run of three or more consecutive code points (``abc``, ``987``) or a copy of three or more characters
    seen before (``abcabc``), each step worth log2 of the alphabet the secret's classes of characters span."""
    secret = secret[:256]  # past that a secret is long enough; the estimate is quadratic in its length
    alphabet = sum(size for chars, size in _CLASSES if any(c in chars for c in secret))
    alphabet += 33 if any(not c.isascii() or not c.isalnum() for c in secret) else 0
    steps, i, n = 0, 0, len(secret)
    while i < n:
        run = 1
        if i + 1 < n and abs(ord(secret[i + 1]) - ord(secret[i])) == 1:
            step = ord(secret[i + 1]) - ord(secret[i])
            while i + run < n and ord(secret[i + run]) - ord(secret[i + run - 1]) == step:
                run += 1
        copy = max((_common(secret, j, i) for j in range(i)), default=0)
        longest = max(run, copy)
        steps += 1
        i += longest if longest >= 3 else 1
    return steps * math.log2(max(alphabet, 2))


def _common(text: str, earlier: int, at: int) -> int:
    """How many characters from ``at`` repeat those from ``earlier`` (the copy may overlap, as in ``aaaa``)."""
    length = 0
    while at + length < len(text) and text[earlier + length] == text[at + length]:
        length += 1
    return length
