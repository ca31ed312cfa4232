"""The rules domain (AutoMT's M-Agent and Validator): traffic rules -> metamorphic relations.

``models`` holds the data events carry; ``ontology``/``lexicon``/``offline_parser`` the offline reasoner;
``llm_parser``/``llm_validator``/``prompts`` the LLM path; ``validation`` the SelfCheckGPT-style checks;
``mr`` the Gherkin form and MR identity; ``scoring`` the accuracy against reference MRs. Nothing is
imported here, so ``import tools.rules.models`` stays light.
"""
