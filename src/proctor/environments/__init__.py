"""Declared test environments: root filesystems built once, mounted read-only by every run.

A challenge declares a Debian suite and packages, a wheel lock, files and variables
(``spec.environment``); ``build`` turns the declaration into a tree and an erofs image in the
store, keyed by the declaration's digest; ``oci`` exports and imports the same tree as an OCI
image archive so participants replicate it outside Proctor.
"""
