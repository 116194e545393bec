"""Scorers: the built-in scoring functions behind the names ``proctor.types.SCORERS`` declares.

Scoring runs in trusted host code, never in an entry's sandbox; messages never carry
reference values.
"""
