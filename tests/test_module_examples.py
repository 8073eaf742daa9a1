"""Every module's docstring examples run and print what they say (the benchmark modules' are run
in test_bench.py)."""

import doctest
import importlib
import pkgutil
import warnings

import pytest

import pushforward

MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(pushforward.__path__, "pushforward.")
    if not m.name.startswith("pushforward.bench")
)


@pytest.mark.parametrize("name", MODULES)
def test_module_examples_run(name):
    mod = importlib.import_module(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, report=False)
    assert res.failed == 0, f"{res.failed} of {res.attempted} examples in {name} fail (python -m doctest -v)"
