"""The review step: who approves the drafts before anything is rendered or sent."""

from __future__ import annotations

from prdigest import pipeline
from prdigest.config import Settings
from prdigest.errors import ConfigError
from prdigest.models import Edition
from prdigest.services import RunOptions


def review_edition(edition: Edition, options: RunOptions, settings: Settings) -> Edition:
    """Return the edition with every entry approved, edited or rejected."""
    if options.approve == "auto":
        return pipeline.auto_approve(edition)
    raise ConfigError("--approve ui is not available in this build yet; use --approve auto")
