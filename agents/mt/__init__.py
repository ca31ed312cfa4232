"""Agents of the AutoMT domain: the T-Agent (describes cases), the F-Agent (follow-ups) and the validity checker."""
