"""What agents declare (their tools, consumed and produced events, error domains) is true of the code."""

from __future__ import annotations

import importlib
import pkgutil

import agents
from agents.runtime import Agent
from bus import ErrorDomain, registry
from tools.common.registry import registry as tool_registry


def _agent_classes() -> list[type[Agent]]:
    for info in pkgutil.walk_packages(agents.__path__, prefix="agents."):
        importlib.import_module(info.name)
    found: list[type[Agent]] = []
    todo = list(Agent.__subclasses__())
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if cls.__module__.startswith("agents."):
            found.append(cls)
    return found


def test_every_agent_is_found() -> None:
    """The ten agents of the daemon are discovered (so the checks below cover them)."""
    names = {cls.name for cls in _agent_classes()}
    assert {
        "m-agent",
        "validator",
        "crash-extractor",
        "sim-planner",
        "sim-runner",
        "judge",
        "tl-augmenter",
        "t-agent",
        "f-agent",
        "validity-checker",
    } <= names


def test_every_listed_tool_is_registered() -> None:
    """Each name in an agent's ``tools`` is a function in the tool registry (nothing listed that does not exist)."""
    missing = {cls.name: [t for t in cls.tools if t not in tool_registry.names] for cls in _agent_classes()}
    assert not {k: v for k, v in missing.items() if v}


def test_declared_events_are_registered_and_domains_are_known() -> None:
    """Consumed and produced events are registered types; each error domain is an ErrorDomain."""
    for cls in _agent_classes():
        assert cls.consumes, cls.name
        for model in (*cls.consumes, *cls.produces):
            assert registry.get(model.model_fields["type"].default) is model, (cls.name, model)
        assert isinstance(cls.error_domain, ErrorDomain)


def test_routed_agents_consume_exactly_what_they_handle() -> None:
    """An agent with one handler per event type consumes exactly those types (the Judge among them)."""
    from agents.judge import JudgeAgent

    assert (
        set(JudgeAgent._routes)
        == JudgeAgent.consumed_types()
        == {
            "sim.completed",
            "crashes.verdict",
            "tl.augmented",
            "followups.generated",
            "followups.validated",
        }
    )
