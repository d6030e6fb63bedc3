"""Selecting what an agent should know now: candidates (queries) and ranking (pure)."""
