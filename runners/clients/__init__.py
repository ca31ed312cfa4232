"""Clients of a running daemon: finding its bus, submitting rules, crash reports and traffic-light datasets,
collecting their results, and operations (status, dead letters). They import the bus and the models, never
the agents or the host."""
