"""Affects your code: upstream code facts matched against a downstream repository's own uses.

``index`` reads what the downstream takes from the upstream (statically, never importing it), ``downstream``
finds and caches it by commit, ``match`` pairs facts with uses, ``step`` gives each entry its ``impact[]``.
"""
