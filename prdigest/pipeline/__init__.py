"""The edition's lifecycle: the composition root (compose), the pipeline's steps (edition) and the one loop that runs
them (loop)."""
