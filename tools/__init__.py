"""Plain typed functions the agents call: ontology, lexicons, parsers, validators, crash extraction, reports.

Tools never import the bus. Modules are imported by name (``tools.rules.offline_parser`` ...); this package
re-exports only its error types so ``import tools`` stays cheap.
"""

from tools.errors import BadInputError, DrivemtError

__all__ = ["BadInputError", "DrivemtError"]
