"""The GitHub source: PyGithub against github.com or GitHub Enterprise, cached in the state store."""

from prdigest.collect.github.source import CollectStats, GitHubSource

__all__ = ["CollectStats", "GitHubSource"]
