"""The AutoMT domain: driving test cases, their loaders, the synthetic driving world, and (next) follow-ups.

``models`` holds the data events carry (cases, ego samples, metadata, frame truth); ``roads`` maps each
region's road words onto canonical ontology terms; ``loaders`` read Udacity, A2D2 and plain folders;
``synth`` draws a synthetic front-camera world with a scripted driver. Nothing is imported here.
"""
