"""The embeddings read model: its table and projector (``projector``), the nearest
items to a vector (``queries``), and the backfill of a fallback model's rows (``backfill``)."""
