"""Prompts of the LLM steps, after AutoMT's M-Agent and SelfCheckGPT validator.

The wording is ours; the structure follows AutoMT: the model works step by step (road type, then
the manipulation and its verb, then the behaviour), chooses every element from the ontology lists,
and states the result in Gherkin form.
"""

from __future__ import annotations

from tools.rules.ontology import Vocabulary

__all__ = [
    "M_AGENT_SYSTEM",
    "ONTOLOGY_PROPOSER_SYSTEM",
    "VALIDATOR_SYSTEM",
    "m_agent_task",
    "ontology_proposer_task",
    "validator_task",
]

M_AGENT_SYSTEM = """You are an expert in traffic rules and driving-scene analysis. Metamorphic testing checks an \
autonomous driving system by changing a test scene and comparing its behaviour before and after. Your task is to turn \
one traffic rule into one metamorphic relation (MR):
  Given the ego-vehicle approaches to <road type>, When drivemt <adds|replaces> <manipulation>, Then ego-vehicle should <behaviour>
Key concepts:
1. Road type: where the rule applies (e.g. crosswalk, intersection); "any roads" when the rule applies everywhere.
2. Manipulation: the object the follow-up scene adds (e.g. a red light, a pedestrian), or the condition it replaces \
(e.g. the weather into a rain environment).
3. Expected behaviour: what the ego-vehicle should do (slow down, turn left, turn right, keep current).
You may call the tools to list ontology terms, ground a phrase, or see which terms the rule mentions. Never invent \
terms: every element comes from the ontology lists you are given."""


def m_agent_task(rule_text: str, vocabulary: Vocabulary) -> str:
    """The user message asking for one MR, with the region's ontology lists."""
    roads = ", ".join(t.text for t in vocabulary.road_types)
    manips = ", ".join(f"{t.text} ({t.verb})" for t in vocabulary.manipulations)
    behaviours = ", ".join(t.text for t in vocabulary.behaviors)
    return f"""Ontology of MR elements:
- Road types: {roads}
- Manipulations (with their verb): {manips}
- Expected behaviours: {behaviours}

Traffic rule:
\"\"\"{rule_text}\"\"\"

Work step by step:
1. Choose one road type clearly named or implied by the rule; if the rule names none, decide whether it applies on \
all roads ("any roads"). Check that it is in the list; if not, choose the closest listed one.
2. List every manipulation the rule mentions or clearly implies; choose the single one that triggers the rule. Check \
that it is in the list.
3. Choose the verb: "adds" for optional objects (road users, signs, lights, obstacles), "replaces" for conditions that \
are always present (weather, lighting, road surface).
4. Choose one expected behaviour from the list.
5. Write the manipulation phrase with one minimal qualifier only: "a steady red light on the roadside" for adds, \
"the weather into rain environment" for replaces. No further detail.
Answer with the structured fields: road_type, manipulation_term (the exact ontology term), verb, manipulation (the \
phrase of step 5, containing the term) and expected_behavior."""


VALIDATOR_SYSTEM = """You check metamorphic relations (MRs) made from traffic rules. Answer each close-ended question \
with "yes" or "no"; answer "no" when the information is not enough to answer confidently. Answer with the structured \
field 'answers': one entry per question, in order."""


def validator_task(rule_text: str, mr: str) -> str:
    """The user message asking the three AutoMT validation questions about one MR."""
    return f"""Traffic rule:
\"\"\"{rule_text}\"\"\"

MR: {mr}

Questions:
1. Are the road type, the manipulation and the expected behaviour of the MR all present in the traffic rule?
2. Is the traffic rule supported by the MR?
3. Are all parts of the MR consistent with each other?"""


ONTOLOGY_PROPOSER_SYSTEM = """You build the vocabulary for metamorphic relations of driving rules. From a document of \
traffic rules you list the road types, traffic infrastructure, objects (road users and obstacles) and environment \
conditions (weather, lighting, road surface) that its rules mention, in short noun phrases."""


def ontology_proposer_task(document: str, vocabulary: Vocabulary) -> str:
    """The user message asking for new ontology elements from a rules document."""
    known = ", ".join(sorted({t.text for t in vocabulary.terms}))
    return f"""Known terms (do not repeat them): {known}

Rules document:
\"\"\"{document}\"\"\"

List the terms this document needs that are not known yet, as the structured fields road_types, \
traffic_infrastructure, object and environment, each a list of short noun phrases."""
