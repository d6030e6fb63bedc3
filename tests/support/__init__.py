"""Test and benchmark tooling that is not part of the runtime package: the workload generator."""
