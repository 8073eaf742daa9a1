"""pushforward's differential fuzzer: random programs run in pushforward and in PyTorch.

Layout (one job per module):
  table.py     the op table: one entry per op (operands, sampled arguments, source template,
               domain away from kinks/cuts/ties). Add an op here and nothing else.
  program.py   seeded generation of straight-line programs (3-12 statements over float64 and
               complex128 inputs), executed step by step in torch so every kept program is
               valid there; source text of a program as ``body(L, x0, ...)``.
  check.py     runs a program in both libraries (primal, jvp, vjp, forward-over-reverse,
               functional.hvp both ways, functional.jvp by double backward), compares, and
               lets central finite differences decide who is wrong.
  shrink.py    drops statements/outputs/inputs and simplifies numbers while the failure
               persists; prints a standalone reproducer over ``import pushforward as pf``.
  campaign.py  a run over many seeds: failure classes, counts, labels for the known classes.
  run.py       the command line: ``PYTHONPATH=src python tests/fuzz/run.py --minutes 5``.

tests/test_fuzz.py runs a fixed-seed slice in the normal suite and tests the fuzzer itself.
"""
