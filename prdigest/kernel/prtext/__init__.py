"""The PR-text toolkit: what a PR's title, body and files say (signals, prose, file kinds, areas), shared by classify,
draft, connect and review."""
