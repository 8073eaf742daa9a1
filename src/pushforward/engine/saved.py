"""Saved values under in-place writes (docs/design.md, "Overwritten saved values").

A tape node that saves an input value for its backward formula keeps a note of it in place of the
version it checks (`core.tensor.note_value`: [version], shared by the nodes that save that value,
held by the value's storage, or by a fresh tensor itself); a custom Function notes itself, weakly
(`core.tensor.add_saver`); a node that saves its output is found as that output's grad_fn. Every
write into tensor memory calls `before_write` first: each value a write may change gets a copy made
now appended to its note (its values, tape edge and tangents: `graph.snapshot`), which the nodes
then read; the others move their version past the write. A write into memory nothing saved costs
one test. `forbid_mutation_on_saved_tensors` restores torch's error instead.

>>> import pushforward as pf
>>> x = pf.tensor([0.3, -0.7, 1.1]).requires_grad_()
>>> y = x * 2.0
>>> z = pf.sin(y)
>>> _ = y.mul_(3.0)
>>> bool(pf.allclose(pf.autograd.grad((z + y).sum(), x)[0], 2 * pf.cos(2 * x) + 6))
True
"""

from __future__ import annotations

import functools
import weakref


from .pending import flush
from .graph import overlaps, snapshot
from .state import STATE
from ..core.tensor import _noted

__all__ = [
    "before_write",
    "keep_overwritten",
    "forbid_mutation_on_saved_tensors",
    "set_mutation_on_saved_tensors_allowed",
    "is_mutation_on_saved_tensors_allowed",
]


def before_write(target, data=None):
    """What must happen before target's memory changes (`data`: only that region of it, an array
    on its memory): the deferred tangents are computed, and the tape nodes that saved a value the
    write may change keep it (keep_overwritten). The caller then writes and bumps the returned
    storage's version.

    >>> import pushforward as pf
    >>> x = pf.tensor([1.0, 2.0])
    >>> before_write(x).version
    0
    """
    for lvl in STATE.levels:  # (flush's test, inline: a write into memory nothing deferred reads is common)
        if lvl.pending:
            flush()  # deferred tangents read their inputs' memory: compute them before it changes
            break
    st = target._st
    if not st.shared:
        st = target._storage()
    base = target._base
    producer = (target if base is None else base)._grad_fn
    if st.values is not None or st.savers is not None:
        keep_overwritten(st, target._data if data is None else data, producer)
    elif producer is not None and getattr(producer, "keep", None) is not None:
        keep_overwritten(st, target._data if data is None else data, producer)
    return st


def keep_overwritten(st, data, producer=None) -> None:
    """`data` (an array on storage `st`) is about to be overwritten: every live node that saved a
    value on st at its current version keeps what it needs (node.keep_overwritten), and st keeps
    only the nodes whose saved values are still read from its memory. The nodes are those noted on
    st, and `producer`, the grad_fn of st's root, which notes nothing when it saves its output
    (graph.OpNode.save_result: the commonest saver needs no note) until a write leaves it reading."""
    if not STATE.saved_mutation_allowed:
        return  # the nodes' version checks raise torch's error at backward
    version = st.version
    if st.values is not None:
        _keep_values(st, data, version)
    sv = st.savers
    live = []
    if producer is not None and getattr(producer, "keep", None) is None:
        producer = None  # (a node that saves no output: found through st's notes if it saved an input)
    if producer is not None and producer.keep_overwritten(st, data, version):
        live.append(weakref.ref(producer))
    for r in () if sv is None else sv if type(sv) is list else (sv,):
        node = r()
        if node is not None and node is not producer and r not in live and node.keep_overwritten(st, data, version):
            live.append(r)
    st.savers = None if not live else (live[0] if len(live) == 1 else live)


def _keep_values(st, data, version: int) -> None:
    """The notes of saved values on st (core.tensor.note_value) before a write into `data`: a value
    the write may change gets its copy (snapshot) appended to its note, the others move past the
    write; notes no node reads any more go."""
    kept = []
    for e in st.values:
        if not _noted(e, version):
            continue
        k, r = e
        t = r()
        if overlaps(t._data, data):
            k.append(snapshot(t))
        else:
            k[0] = version + 1
            kept.append(e)
    st.values = kept or None


def is_mutation_on_saved_tensors_allowed() -> bool:
    """Does an in-place write into a value the tape saved keep the old value for the backward pass
    (the default), rather than make backward raise torch's SavedTensorModifiedError?

    >>> import pushforward as pf
    >>> pf.autograd.is_mutation_on_saved_tensors_allowed()
    True
    """
    return STATE.saved_mutation_allowed


def set_mutation_on_saved_tensors_allowed(mode: bool) -> None:
    """Allow (True, the default) or forbid (False: torch's behaviour) in-place writes into values
    the tape saved, for this thread. Forbidden, a backward pass through a node whose saved value was
    written raises SavedTensorModifiedError.

    >>> import pushforward as pf
    >>> pf.autograd.set_mutation_on_saved_tensors_allowed(False)
    >>> pf.autograd.is_mutation_on_saved_tensors_allowed()
    False
    >>> pf.autograd.set_mutation_on_saved_tensors_allowed(True)
    """
    STATE.saved_mutation_allowed = bool(mode)


class forbid_mutation_on_saved_tensors:
    """Context manager (and decorator) giving torch's rule inside: a write into a value the tape
    saved is not kept, and the backward pass raises SavedTensorModifiedError. What decides is the
    mode at the time of the write.

    >>> import pushforward as pf
    >>> x = pf.tensor([1.0, 2.0], requires_grad=True)
    >>> with pf.autograd.forbid_mutation_on_saved_tensors():
    ...     y = x * 1.0
    ...     z = y.sin()
    ...     _ = y.add_(1.0)
    >>> try:
    ...     z.sum().backward()
    ... except pf.errors.SavedTensorModifiedError:
    ...     print("modified")
    modified
    """

    def __enter__(self) -> None:
        self._prev = STATE.saved_mutation_allowed
        STATE.saved_mutation_allowed = False

    def __exit__(self, *exc) -> None:
        STATE.saved_mutation_allowed = self._prev

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*a, **k):
            with forbid_mutation_on_saved_tensors():
                return fn(*a, **k)

        return wrapper
