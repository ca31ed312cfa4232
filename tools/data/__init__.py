"""Data files packaged with drivemt: ontology, lexicon, sample rules, report templates."""
