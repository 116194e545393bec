"""Scorers: reading references and predictions (``proctor.formats``) and computing the metrics.

Below the services and the pipeline, so every face (CLI, web) and protocol reuses them.
"""
