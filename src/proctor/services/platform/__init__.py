"""Use cases of the hosted platform.

Accounts, teams, submissions, quotas, boards, rescore, refunds, installs, serving and its
workers. They may call :mod:`proctor.services.local`, never the other way round.
"""
