"""The crash domain (SAFE): crash reports -> scenario DSL -> simulated runs -> verdicts.

``models`` holds the data events carry (the DSL, run specs and records, verdicts); ``extract`` and
``llm_extractor`` read reports; ``templates`` and ``tools`` are the extractor's knowledge and tools;
``runs`` plans a scenario's runs; ``verdict`` is the oracle (crash reproduced, violations); ``report``
draws a batch; ``scoring`` measures extraction against gold annotations. Nothing is imported here.
"""
