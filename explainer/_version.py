"""The package version, readable without importing the rest of explainer."""

__version__ = "0.1.0"
