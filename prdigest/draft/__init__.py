"""Drafting: turning a merged PR and its subsystems into a draft entry for the editor.

Two implementations of one protocol, registered in ``prdigest.draft.registry`` and built there by the
composition root (``prdigest.pipeline.compose``) and by ``digest eval``: the offline drafter
(``prdigest.draft.offline``, deterministic, no network) and the OpenAI-compatible one
(``prdigest.draft.llm``), which falls back to the offline draft when the model fails.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from prdigest.kernel.models import DraftEntry, Language, PullRequest

if TYPE_CHECKING:
    from prdigest.draft.packing import DraftContext


@runtime_checkable
class Drafter(Protocol):
    """Writes one draft entry per PR.

    Contract of :meth:`draft`:

    - It returns a :class:`~prdigest.kernel.models.DraftEntry` for ``pr`` (same ``number``) written in
      ``language`` ("zh-CN" or "en"), with ``drafter`` set to the drafter's :attr:`name` (or a name
      derived from it, such as ``"offline-fallback"``).
    - It never raises for a valid ``PullRequest``, whatever its text holds (empty, huge, hostile):
      a PR that cannot be drafted well still gets an entry, marked ``needs_editing`` with ``warnings``.
    - ``subsystems`` may be empty or ``["other"]``; the draft must still be sensible.
    - It is deterministic for the same inputs (the offline drafter strictly; a model-backed drafter as
      far as its cache and the model allow) and does not escape text: renderers escape per medium.
    - ``context`` (:class:`~prdigest.draft.packing.DraftContext`) is what the run knows besides the PR: its
      code facts, its relations so far, the files' full text; None or empty when nothing is known.
    """

    name: str

    def draft(self, pr: PullRequest, subsystems: list[str], language: Language,
              context: "DraftContext | None" = None) -> DraftEntry:
        """Draft the entry for ``pr`` in ``language``."""
        ...

    def check(self) -> None:
        """Preflight before the first draft: raise :class:`~prdigest.kernel.errors.ConfigError` in one line
        when the drafter cannot work (no key, unreachable endpoint, unknown model)."""
        ...

    def close(self) -> None:
        """Release what the drafter holds (connections, its cache); safe to call twice."""
        ...


@runtime_checkable
class ModelDrafter(Drafter, Protocol):
    """A drafter backed by a model, whose validated drafts the state store's draft cache keeps by :meth:`key`
    (``digest eval`` reports which were reused, and what each cost when it was made)."""

    model: str
    prompt_version: str

    @property
    def endpoint(self) -> str:
        """The model's base URL, without credentials (for reports)."""
        ...

    def key(self, pr: PullRequest, subsystems: list[str], language: Language,
            context: "DraftContext | None" = None) -> str:
        """The draft cache key of ``pr`` (given ``context``) for this drafter."""
        ...


__all__ = ["Drafter", "ModelDrafter"]
