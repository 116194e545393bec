"""Proctor: run scientific challenges whose participants submit code."""

__version__ = "0.1.0"
