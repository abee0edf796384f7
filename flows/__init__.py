"""Prefect flows: thin orchestration over the core package (pr-digest's only Prefect-aware code)."""
