"""Agents of the rules domain: the M-Agent (rules -> MR candidates) and the Validator (candidates -> stored MR)."""
