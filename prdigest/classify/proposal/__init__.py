"""Proposing a repository's subsystem vocabulary from the repository itself (``digest rules init``)."""
