"""Tools every domain shares: the tool registry, provenance, text normalisation, label similarity, LLM
clients and the HTML report environment. Nothing here knows a domain; nothing is imported eagerly."""
