"""pr-digest core: plain, typed domain code. Never imports Prefect (see tests/test_architecture.py)."""

__version__ = "0.1.0"
