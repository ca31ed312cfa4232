"""The traffic-light domain (TIGAUG): label models, dataset formats, the twelve transformations, metrics, the
detectors' relations (``judging``) and reports.

``models`` holds the data events carry (labels, transformation codes). Nothing is imported here, so
``import tools.tl.models`` stays light; heavy modules (imgaug, OpenCV, torch) load inside the functions
that use them.
"""
