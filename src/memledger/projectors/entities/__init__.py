"""The entities read model: its table and projector (``projector``), and merges of
entities into one (``merges``)."""
