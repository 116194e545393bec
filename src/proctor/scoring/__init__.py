"""Scorers: each module declares its scorer, and ``registry`` holds the one scorer table.

Reading references and predictions (``proctor.formats``) and computing the metrics, in trusted
host code, never in an entry's sandbox; messages never carry reference values. Below the
services and the pipeline, so every face (CLI, web) reuses them.
"""
