"""Step 1, collect: the PR sources (the JSONL file, GitHub) behind one Source protocol and their registry."""
