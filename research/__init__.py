"""The lab notebook: studies and one-off experiments behind memoryd's design decisions (see README.md). Not
installed and not imported by anything; each runs from the repository root as `python -m research.<name>`."""
