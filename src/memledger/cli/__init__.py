"""The ``memledger`` command line."""
