"""Agents of the traffic-light domain: the TL-Augmenter."""
