"""What drafting cost: tokens priced at the configured per-million rates.

Its own module so that an edition's cost is summed without importing a model client (the offline demo
would otherwise import the openai package for one multiplication)."""

from __future__ import annotations

from prdigest.kernel.config import Settings


def cost_usd(tokens_in: int, tokens_out: int, settings: Settings) -> float:
    """The estimated price of ``tokens_in``/``tokens_out`` at the configured per-million rates."""
    return round(tokens_in * settings.llm_price_in / 1e6 + tokens_out * settings.llm_price_out / 1e6, 6)
