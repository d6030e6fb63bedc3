"""Extraction: turning turns into facts, entities and relationships. Pure parsers."""
