"""Automatic recall: for a prompt an agent is about to answer, the few memories worth putting in front of it,
or nothing."""
