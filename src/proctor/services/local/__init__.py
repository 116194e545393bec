"""Use cases of evaluating on this host: run, kits, the score commands, environments, the demo.

Nothing here knows of the database, accounts or the executor: ``proctor run`` works with none.
"""
