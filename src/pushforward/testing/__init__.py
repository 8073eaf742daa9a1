"""Testing utilities: the op database (`pushforward.testing.opdb`).

>>> from pushforward.testing.opdb import OPS, check_op
>>> sorted(check_op("sin"))
['backward', 'complex', 'error', 'forward', 'fwd_over_rev', 'kind']
"""
