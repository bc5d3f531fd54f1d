"""``python -m agentrun``: the same as the ``agentrun`` command."""

from agentrun._entry import main

main()
