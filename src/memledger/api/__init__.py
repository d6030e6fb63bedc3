"""The HTTP API (FastAPI). Thin: every endpoint calls the service layer."""
