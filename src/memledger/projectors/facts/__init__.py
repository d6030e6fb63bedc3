"""The facts read model: its table and projector (``projector``), the pure fold of a
slot's facts (``fold``), and the queries that read it (``queries``, ``channels``)."""
