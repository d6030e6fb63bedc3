"""The turns read model: its table and projector (``projector``), and who said each
turn, in which scopes (``voices``)."""
