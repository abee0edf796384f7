"""``digest web``: readers' one-click unsubscribe and preferences pages, over the state store."""
