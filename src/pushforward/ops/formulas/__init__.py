"""Derivative formulas too long for one YAML expression, written over the library's own ops."""
