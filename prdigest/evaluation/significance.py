"""Is one configuration better than another on the same PRs? McNemar's exact test on paired outcomes.

Two drafters judged on the same labelled PRs give paired right/wrong outcomes. Only the *discordant*
PRs (exactly one of the two right) carry information about which is better: under "no difference" each
is equally likely to favour either side, so the count favouring B is Binomial(b + c, 1/2). The two-sided
exact p-value is twice the smaller tail (capped at 1). With fewer than :data:`MIN_DISCORDANT` discordant
PRs no split at all reaches p < 0.05, so the honest answer is "too few to tell".
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb

#: Significance level used for the verdicts in reports.
ALPHA = 0.05
#: Smallest discordant count for which the most lopsided split (all on one side) has p < ALPHA: 2·0.5^6 = 0.031.
MIN_DISCORDANT = 6


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value for ``b`` PRs only A got right and ``c`` only B got right."""
    if b < 0 or c < 0:
        raise ValueError("counts must be non-negative")
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(comb(n, i) for i in range(min(b, c) + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def discordant_needed(b: int, c: int, alpha: float = ALPHA, limit: int = 100_000) -> int | None:
    """Discordant PRs needed for the observed split ``b : c`` to reach ``alpha`` (None: an even split never does).

    A planning figure, not a power calculation: it keeps the observed proportion and asks how many
    discordant PRs would make it significant.
    """
    n = b + c
    if n == 0 or b == c:
        return None
    share = max(b, c) / n
    m = MIN_DISCORDANT
    while m <= limit:
        high = round(share * m)
        if high != m - high and mcnemar_exact(high, m - high) < alpha:
            return m
        m += 1
    return None


@dataclass(frozen=True)
class PairedTest:
    """The outcome of comparing A and B on one right/wrong measure over the same PRs."""

    measure: str
    n: int
    a_right: int
    b_right: int
    only_a: int
    only_b: int
    p_value: float
    needed: int | None

    @property
    def verdict(self) -> str:
        """One phrase for the report: which side is better, or why we cannot say."""
        if self.only_a + self.only_b < MIN_DISCORDANT:
            return (f"too few to tell: {self.only_a + self.only_b} PR(s) differ; at least {MIN_DISCORDANT} "
                    "must differ before any split can be significant")
        if self.p_value < ALPHA:
            better = "B" if self.only_b > self.only_a else "A"
            return f"{better} is better (p = {self.p_value:.3g})"
        need = f"; about {self.needed} differing PRs at this split would make it significant" if self.needed else ""
        return f"no significant difference (p = {self.p_value:.3g}){need}"

    def as_dict(self) -> dict[str, object]:
        """JSON form, with the verdict phrase."""
        return {"measure": self.measure, "n": self.n, "a_right": self.a_right, "b_right": self.b_right,
                "only_a": self.only_a, "only_b": self.only_b, "p_value": self.p_value,
                "discordant_needed": self.needed, "verdict": self.verdict}


def paired_test(measure: str, a: list[bool], b: list[bool]) -> PairedTest:
    """McNemar's exact test on two aligned lists of right/wrong outcomes."""
    if len(a) != len(b):
        raise ValueError("outcome lists must be aligned on the same PRs")
    only_a = sum(x and not y for x, y in zip(a, b))
    only_b = sum(y and not x for x, y in zip(a, b))
    return PairedTest(measure, len(a), sum(a), sum(b), only_a, only_b, mcnemar_exact(only_a, only_b),
                      discordant_needed(only_a, only_b))
