"""``python -m agentrun``: the same as the ``agentrun`` command."""

from agentrun.cli import main

main()
