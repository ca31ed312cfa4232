"""The synthetic driving world: scenes, the scripted driver, the renderer, datasets with ground truth."""
