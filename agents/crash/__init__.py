"""Agents of the crash domain: the CrashExtractor, the SimPlanner and the SimRunner."""
