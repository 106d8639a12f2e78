"""Shared between the fixtures and the tests of this folder."""

# The agent the tests run.
AGENT = "smol"

# What the model did in this session's runs, for the summary printed at the end.
OBSERVED: dict = {}
