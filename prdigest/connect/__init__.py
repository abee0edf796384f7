"""Step 4, connect: relations to this and earlier editions, stories, earlier follow-ups, read first, ledes and the
variants (one per reader filter)."""
