"""The model's usage as the editor reads it: drafts by origin, tokens and estimated cost (no model client import)."""

from __future__ import annotations

from prdigest.draft.cost import cost_usd
from prdigest.kernel.config import Settings
from prdigest.kernel.models import Entry


def usage_markdown(entries: list[Entry], settings: Settings) -> str:
    """The draft step's LLM usage for the editor: drafts by origin, tokens and estimated cost (markdown)."""
    llm = [e for e in entries if e.drafter.startswith("openai:")]
    cached = [e for e in llm if e.tokens_in == 0 and e.tokens_out == 0]
    fallbacks = [e for e in entries if e.drafter in ("offline-fallback", "placeholder")]
    flagged = [e for e in entries if e.grounding]
    tokens_in, tokens_out = sum(e.tokens_in for e in entries), sum(e.tokens_out for e in entries)
    lines = [
        f"# LLM drafting ({settings.model})", "",
        "| drafts | LLM, new | LLM, from cache | fallback (needs editing) | grounding flagged |",
        "| ---: | ---: | ---: | ---: | ---: |",
        f"| {len(entries)} | {len(llm) - len(cached)} | {len(cached)} | {len(fallbacks)} | {len(flagged)} |", "",
        f"Tokens in: {tokens_in:,}; tokens out: {tokens_out:,}; estimated cost: "
        f"${cost_usd(tokens_in, tokens_out, settings):.4f} (at ${settings.llm_price_in}/M in, "
        f"${settings.llm_price_out}/M out).",
    ]
    if fallbacks or flagged:
        lines += ["", "| PR | why the editor should look |", "| ---: | --- |"]
        for entry in [*fallbacks, *(e for e in flagged if e not in fallbacks)]:
            # Warnings can quote model output: shown as code, so no link or image in them renders.
            why = " ".join("; ".join(entry.warnings)[:160].replace("`", "'").replace("|", "\\|").split())
            lines.append(f"| #{entry.number} | `{why}` |")
    return "\n".join(lines)
