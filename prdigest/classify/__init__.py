"""Step 2, classify: a repo's subsystem rules (its rules file, or a proposal from its own conventions) and the
classifier."""
