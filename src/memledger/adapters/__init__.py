"""Outbound clients: LLM extraction through litellm."""
