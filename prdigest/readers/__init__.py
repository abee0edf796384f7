"""The audience: the readers file (who gets what) and what readers choose themselves (selfservice/)."""
