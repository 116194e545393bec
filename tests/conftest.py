"""Fixtures shared by every test module."""

pytest_plugins = [
    "sandbox_fixtures",
    "environment_fixtures",
    "db_fixtures",
    "browser_fixtures",
    "signal_fixtures",
    "smtp_fixtures",
    "kit_audit",
]
