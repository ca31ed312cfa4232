"""The host: the daemon process, the composition root that builds its agents, in-process runs, the services it
offers on the bus, and its errors. The only layer below the CLI and the terminal UI that builds agents."""
