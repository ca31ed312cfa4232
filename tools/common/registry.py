"""The tool registry: plain typed functions, handed to autogen agents as function tools.

A tool is an ordinary function whose first parameter is a :class:`ToolContext` (the ontology, parsers
and models it may use) and whose other parameters are JSON-friendly and typed. Agents call tools
directly; when an LLM is configured, :meth:`ToolRegistry.autogen_tools` binds the context and wraps
the same functions as ``autogen_core.tools.FunctionTool`` for an ``AssistantAgent``.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from tools.errors import DrivemtError

if TYPE_CHECKING:
    from autogen_core.tools import FunctionTool

__all__ = ["ToolRegistry", "ToolSpec", "registry", "tool"]

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class ToolSpec:
    """A registered tool.

    Attributes:
        name: Tool name as a model sees it.
        description: What the tool does, for the model.
        func: The function; its first parameter receives the tool context.
    """

    name: str
    description: str
    func: Callable[..., Any]


class ToolRegistry:
    """Named tools; refuses two tools with one name."""

    def __init__(self) -> None:
        self._tools: dict[str, ToolSpec] = {}

    def register(self, func: F | None = None, *, name: str | None = None, description: str | None = None) -> Any:
        """Register a function (usable as ``@registry.register`` or ``@registry.register(name=...)``)."""

        def add(fn: F) -> F:
            tool_name = name or fn.__name__
            if tool_name in self._tools:
                raise ValueError(f"tool {tool_name!r} is registered twice")
            params = list(inspect.signature(fn).parameters)
            if not params or params[0] != "ctx":
                raise TypeError(f"tool {tool_name!r} must take the tool context as its first parameter 'ctx'")
            doc = description or inspect.getdoc(fn) or ""
            self._tools[tool_name] = ToolSpec(tool_name, doc.split("\n\n")[0].strip(), fn)
            return fn

        return add(func) if func is not None else add

    def get(self, name: str) -> ToolSpec:
        """A tool by name.

        Raises:
            DrivemtError: If no such tool is registered.
        """
        try:
            return self._tools[name]
        except KeyError:
            raise DrivemtError(f"no tool named {name!r}; known: {', '.join(sorted(self._tools))}") from None

    @property
    def names(self) -> list[str]:
        """Registered tool names."""
        return sorted(self._tools)

    def call(self, name: str, ctx: Any, /, **kwargs: Any) -> Any:
        """Call a tool directly."""
        return self.get(name).func(ctx, **kwargs)

    def autogen_tools(self, names: Iterable[str], ctx: Any) -> list[FunctionTool]:
        """The named tools as autogen function tools, with the context bound."""
        from autogen_core.tools import FunctionTool

        out = []
        for n in names:
            spec = self.get(n)
            # Strict: OpenAI's structured output (the M-Agent's MR draft) refuses to run beside a tool that is not.
            out.append(FunctionTool(_bind(spec.func, ctx), description=spec.description, name=spec.name, strict=True))
        return out


def _bind(fn: Callable[..., Any], ctx: Any) -> Callable[..., Any]:
    """``fn`` with its context bound, keeping the other parameters' resolved types for autogen's schema."""
    hints = typing.get_type_hints(fn)
    sig = inspect.signature(fn)
    params = [p.replace(annotation=hints.get(p.name, p.annotation)) for p in list(sig.parameters.values())[1:]]

    @functools.wraps(fn)
    def bound(**kwargs: Any) -> Any:
        return fn(ctx, **kwargs)

    bound.__signature__ = sig.replace(parameters=params, return_annotation=hints.get("return", sig.return_annotation))  # type: ignore[attr-defined]
    bound.__annotations__ = {p.name: p.annotation for p in params} | (
        {"return": hints["return"]} if "return" in hints else {}
    )
    del bound.__wrapped__
    return bound


registry = ToolRegistry()
"""The process-wide registry every tool module registers into."""

tool = registry.register
"""Decorator registering a function in :data:`registry`."""
