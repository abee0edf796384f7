"""The shared kernel: the domain models, errors, text safety, options and settings, the plugin registry, the subsystem
vocabulary, prompts as data and the PR-text toolkit (prtext/) that several steps read PRs with. Depends on nothing else
of ours."""
