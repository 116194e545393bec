"""Scorers: the built-in scoring functions behind the names ``proctor.types.SCORERS`` declares.

Reading references and predictions (``proctor.formats``) and computing the metrics, in trusted
host code, never in an entry's sandbox; messages never carry reference values. Below the
services and the pipeline, so every face (CLI, web) and protocol reuses them.
"""
