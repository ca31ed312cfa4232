"""Classical (CPU) editing of driving frames: the stage, environment edits, procedural infrastructure, sprites."""
