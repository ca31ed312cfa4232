"""``python -m runners.cli``: the same as the ``drivemt`` console script."""

from runners.cli import main

main()
