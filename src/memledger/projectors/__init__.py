"""Projectors: fold the ledger into read models, checkpointed in the same transaction.

One package per read model (``facts``, ``entities``, ``relationships``, ``embeddings``,
``turns``; ``api_keys`` is one module), each holding its table, its projector and the
queries that read it; beside them, the machinery they share (``runner``, ``checkpoints``,
``rebuild``, ``registry``, ...).
"""
