"""reprobot: triage TVM bug reports by running them."""

__version__ = "0.1.0"
