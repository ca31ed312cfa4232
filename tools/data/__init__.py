"""Data files packaged with drivemt: ontology, lexicons, sample rules and crash reports, report templates."""
