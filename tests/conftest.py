"""Every test starts with grad mode on and no live dual level, and fails if it leaks either.

The files that sweep the whole op database, run the fuzzer or build the docs are marked `slow`:
`python -m pytest -m "not slow"` is the newcomer's subset (a few minutes less than the suite's
five; README, "Running the tests"). Without the optional extras (torch, Dask, PyYAML, mpmath,
hypothesis, matplotlib) the tests that need one skip, naming it.

PyTorch (the reference oracle) and the other test extras are required in CI: a broken install
there fails the run instead of skipping every test that compares against torch. Outside CI,
those tests skip with a visible reason.
"""

import importlib.util
import os

import pytest

import pushforward as pf
import pushforward.autograd.forward_ad as fwAD
from pushforward.engine.state import STATE


# the test files too slow for a first run: the op database swept op by op, the fuzzer, the docs
SLOW_FILES = frozenset(
    {
        "test_ops.py",
        "test_trust_ops.py",
        "test_fuzz.py",
        "test_fuzz_breadth.py",
        "test_codegen.py",
        "test_docs_site.py",
        "test_examples.py",
        "test_bench.py",
        "test_port_programs.py",
    }
)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.name in SLOW_FILES:
            item.add_marker(pytest.mark.slow)


# the test extras whose absence would otherwise skip whole files
REQUIRED_IN_CI = ("torch", "yaml", "hypothesis", "mpmath")


def pytest_configure(config):
    if os.environ.get("CI", "").lower() in ("", "0", "false"):
        return
    missing = [m for m in REQUIRED_IN_CI if importlib.util.find_spec(m) is None]
    if missing:
        raise pytest.UsageError(
            f"CI run without the test extras {missing}: install them with pip install -e '.[test]' "
            "(tests that compare against them would be skipped)"
        )


@pytest.fixture(autouse=True)
def _clean_autodiff_state():
    while STATE.levels:
        fwAD.exit_dual_level()
    pf.set_grad_enabled(True)
    yield
    leaked_levels = len(STATE.levels)
    leaked_mode = not pf.is_grad_enabled()
    while STATE.levels:
        fwAD.exit_dual_level()
    pf.set_grad_enabled(True)
    assert not leaked_levels, "test left a dual level open"
    assert not leaked_mode, "test left grad mode disabled"


@pytest.fixture
def no_level():
    """No dual level open before the test nor left open after it."""
    from pushforward.engine.state import STATE
    import pushforward.autograd.forward_ad as fwAD

    while STATE.levels:
        fwAD.exit_dual_level()
    yield
    assert not STATE.levels
