"""Agents: the runtime (consume -> handle -> publish -> ack) and one module per agent."""

from agents.m_agent import MAgent
from agents.runtime import Agent, AgentRunner, Outcome, error_event
from agents.validator import ValidatorAgent

__all__ = ["Agent", "AgentRunner", "MAgent", "Outcome", "ValidatorAgent", "error_event"]
