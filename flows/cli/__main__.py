"""``python -m flows.cli``: the same as the ``digest`` command."""

from flows.cli import main

main()
