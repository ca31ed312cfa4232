"""The project's base error and the errors of the tools package.

Every error drivemt raises on purpose derives from :class:`DrivemtError`; each package adds its own in
its ``errors.py``. Errors keep their data as attributes and build their message in ``__init__``.
"""

from __future__ import annotations

__all__ = [
    "BadInputError",
    "DrivemtError",
    "EmptyRuleError",
    "LLMConfigurationError",
    "LLMResponseError",
    "OntologyError",
    "RuleTooLongError",
    "UnknownRegionError",
    "UnknownTermError",
]


class DrivemtError(Exception):
    """Base of every error drivemt raises on purpose."""


class BadInputError(DrivemtError):
    """Input that can never succeed, however often it is retried: report it and move on."""


class EmptyRuleError(BadInputError):
    """A traffic rule with no text."""

    def __init__(self, rule_id: str | None = None) -> None:
        self.rule_id = rule_id
        where = f" (rule {rule_id})" if rule_id else ""
        super().__init__(f"the traffic rule is empty{where}: give the rule's text")


class RuleTooLongError(BadInputError):
    """A traffic rule larger than the limit (one rule, not a whole document)."""

    def __init__(self, size: int, limit: int, rule_id: str | None = None) -> None:
        self.size = size
        self.limit = limit
        self.rule_id = rule_id
        where = f"rule {rule_id} " if rule_id else "the rule "
        super().__init__(
            f"{where}is {size} bytes, over the {limit}-byte limit for one rule; "
            "split a rules document into one rule per line or per JSON object"
        )


class UnknownRegionError(BadInputError):
    """A region the ontology has no section for."""

    def __init__(self, region: str, known: list[str]) -> None:
        self.region = region
        self.known = known
        super().__init__(f"unknown region {region!r}; known regions: {', '.join(known)}")


class UnknownTermError(BadInputError):
    """A road type, manipulation or behaviour that is not in the ontology."""

    def __init__(self, field: str, value: str, suggestions: list[str] | None = None) -> None:
        self.field = field
        self.value = value
        self.suggestions = suggestions or []
        hint = f"; did you mean {', '.join(repr(s) for s in self.suggestions)}?" if self.suggestions else ""
        super().__init__(f"unknown {field} {value!r}: not in the ontology{hint}")


class OntologyError(DrivemtError):
    """An ontology file that cannot be read or is malformed."""

    def __init__(self, source: str, reason: str) -> None:
        self.source = source
        self.reason = reason
        super().__init__(f"ontology {source}: {reason}")


class LLMConfigurationError(DrivemtError):
    """An LLM provider that is misconfigured (unknown provider, missing key, missing model)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"LLM configuration: {reason}")


class LLMResponseError(DrivemtError):
    """A model answer that does not fit the expected structure."""

    def __init__(self, model: str, reason: str) -> None:
        self.model = model
        self.reason = reason
        super().__init__(f"model {model} gave an unusable answer: {reason}")
