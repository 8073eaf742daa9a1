"""Composite ops: bodies of ops declared in derivatives.yaml as compositions of other ops."""
