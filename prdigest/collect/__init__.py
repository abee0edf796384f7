"""Collect: the PRs merged in a window, and what their diffs did to the code."""
