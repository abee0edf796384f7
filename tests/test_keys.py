"""One rule for every HMAC key (prdigest/kernel/keys.py): long, varied, and not guessable by its runs and repeats."""

from __future__ import annotations

import secrets

import pytest
from pydantic import SecretStr

from prdigest.kernel.errors import ConfigError
from prdigest.kernel.keys import MIN_BITS, check_secret, entropy_bits
from prdigest.kernel.location import StateLocation


@pytest.mark.parametrize("weak", [
    "0123456789abcdefghijklmnopqrstuv",             # two runs: long and varied, guessed at once
    "abcdefghijabcdefghijabcdefghij12",              # one run, then copies of it
    "zyxwvutsrqponmlkjihgfedcba9876543210",          # runs going down
    "Winter2026!" * 4,                                # a password repeated
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop",    # the alphabet
])
def test_a_long_varied_but_guessable_secret_is_refused_naming_the_setting(weak: str, tmp_path) -> None:
    from prdigest.readers.selfservice import LinkSigner
    from prdigest.state.seal import SealKey

    assert entropy_bits(weak) < MIN_BITS
    with pytest.raises(ConfigError, match="DIGEST_WEB_SECRET is .* guessable") as refused:
        LinkSigner(weak)
    assert weak not in str(refused.value)
    with pytest.raises(ConfigError, match="DIGEST_RECORD_SECRET is .* guessable"):
        SealKey.check_setting(StateLocation.parse(tmp_path / "s.sqlite"), SecretStr(weak))


def test_random_secrets_pass_whatever_their_alphabet() -> None:
    for _ in range(300):
        for secret in (secrets.token_urlsafe(32), secrets.token_hex(16), secrets.token_urlsafe(24)):
            check_secret(secret, "DIGEST_WEB_SECRET")


def test_the_estimate_reads_a_bounded_prefix_of_a_huge_secret() -> None:
    """The estimate is quadratic in what it reads: it reads at most the first 256 characters (counted, not timed)."""
    huge = secrets.token_urlsafe(100_000)
    assert entropy_bits(huge) == entropy_bits(huge[:256]) > MIN_BITS


def test_a_random_hex_token_with_a_common_digit_passes() -> None:
    """Failed before: a 32-digit hex token whose commonest digit filled a quarter of it was refused (about one
    random token in 500), though nothing about it is guessable."""
    check_secret("a3f0a91a7ca2a4e6a8ab5da2ac03a1d9", "DIGEST_WEB_SECRET")


def test_a_random_hex_token_of_nine_different_digits_passes() -> None:
    """Failed before (CI drew it): a 32-digit hex token of only nine different digits was refused by a floor of ten,
    about one random token in 10,000, though nothing about it is guessable."""
    check_secret("56949522982550f98495222828194115", "DIGEST_WEB_SECRET")


@pytest.mark.parametrize("few", ["ab" * 20, "abcab" * 8, "aaaaabbbbbcccccddddd" * 2])
def test_a_long_secret_of_few_characters_is_still_refused(few: str) -> None:
    with pytest.raises(ConfigError, match="DIGEST_WEB_SECRET is"):
        check_secret(few, "DIGEST_WEB_SECRET")
