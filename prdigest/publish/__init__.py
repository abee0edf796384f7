"""Step 7, publish: what the archive is built from, and screenshots of rendered messages."""
