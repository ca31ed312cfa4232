"""Agents: the runtime (consume -> handle -> publish -> ack) and one module per agent."""

from agents.rules.m_agent import MAgent
from agents.rules.validator import ValidatorAgent
from agents.runtime import Agent, AgentRunner, Outcome, error_event

__all__ = ["Agent", "AgentRunner", "MAgent", "Outcome", "ValidatorAgent", "error_event"]
