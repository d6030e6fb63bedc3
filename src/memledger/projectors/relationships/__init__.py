"""The relationships read model: its table and projector (``projector``), walks and
lookups of the graph (``graph_queries``), and how the graph ages when read (``graph_aging``)."""
