"""Use cases. Each opens its own transaction and passes it down."""
