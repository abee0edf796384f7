"""Prompt templates: data, not code. One YAML file per prompt with ``version``, ``system`` and ``user``."""
