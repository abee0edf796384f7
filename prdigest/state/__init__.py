"""The state the pipeline keeps: the store (SQLite or PostgreSQL), the edition record and the history index."""
