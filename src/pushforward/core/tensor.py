"""Tensor: an ndarray plus autodiff metadata (tape identity, tangents, view links).

Ops and most methods are generated from derivatives.yaml and attached at import time
(see `ops/generated.py`); this module holds storage, views, the version counter and
the Python protocol methods.
"""

from __future__ import annotations

import dis
import math
import sys
import weakref
from typing import Any, Iterator

import numpy as np

from ..errors import OpError, OpIndexError, OpTypeError, check_dim
from .lazy import Seen, concrete, is_lazy_array, lazy_repr

__all__ = [
    "Tensor",
    "device",
    "FLOATING",
    "wrap",
    "lazy_array",
    "alias",
    "join_storage",
    "mark_dual",
    "needs_ad",
    "mark_ad",
    "set_history",
    "add_saver",
    "note_value",
    "UNWRITTEN",
    "lost_derivative",
    "has_derivative",
    "Size",
]

_new = object.__new__
_ndarray = np.ndarray


class _Storage:
    """Shared by a base tensor and all its views/aliases: version counter, dual flag, and what the
    tape saved on it (`values`, `savers`: docs/design.md, "Overwritten saved values")."""

    __slots__ = ("version", "dual", "views", "members", "_pruned_at", "savers", "values")
    shared = True

    def __init__(self) -> None:
        self.version = 0
        # True once any tensor on this storage carried a tangent: its views and aliases may
        # then see a tangent through their base (mark_dual sets their `_ad` bits)
        self.dual = False
        # weak references to the views made while the root required no grad: a differentiable
        # in-place write into the root makes them require grad too (inplace.commit)
        self.views = None
        # weak references to every tensor on this storage (join_storage), for mark_dual
        self.members = []
        self._pruned_at = 8
        # weak references to tape nodes that saved a value on this memory (None, one reference, or
        # a list; add_saver), and the notes of saved values (note_value): an in-place write keeps
        # what they read before it overwrites it
        self.savers = None
        self.values = None


class _NoStorage:
    """Placeholder storage of a fresh tensor (version 0, never dual); replaced on demand."""

    __slots__ = ()
    version = 0
    dual = False
    shared = False


_NO_STORAGE = _NoStorage()

FLOATING = frozenset("fc")  # dtype kinds that may carry gradients and tangents


class Tensor:
    """An n-dimensional array that can carry gradients (tape) and tangents (dual levels).

    >>> import pushforward as pf
    >>> x = pf.tensor([1.0, 2.0], requires_grad=True)
    >>> (x * x).sum().backward(); x.grad
    tensor([2., 4.])
    """

    # Class-level defaults: creating a tensor only sets `_data`, which keeps the
    # per-op overhead low. Instances override what they need.
    _st = _NO_STORAGE  # shared _Storage (version counter)
    _saved_at = None  # the note of its saved value (note_value), while it has no storage
    _base = None  # root tensor of a view (None for a root)
    _view = ()  # steps replaying this view from its root: ((fn, args), ...)
    # (holder, tangent's array, array) of a view made without a tangent of its own
    # (dispatch.general.run_view): its tangents are those of `holder` (the dual tensor it was made
    # from, or that one's holder) through the view; `array` is that view of the array of the
    # holder's tangent when the view was made (docs/design.md, "Lazy view tangents")
    _vsrc = None
    _view_version = 0  # storage version at which a view's grad_fn was made
    _requires_grad = False
    _grad_fn = None
    _output_nr = 0
    _grad_acc = None  # AccumulateGrad node of a leaf (shared by its aliases)
    _fw = None  # {level: tangent} of this tensor's own tangents
    _retains_grad = False
    # The one "needs autodiff" bit the dispatcher tests: True once the tensor requires grad,
    # carries a tangent, or shares a storage that carried one (then a view may see its base's
    # tangent). It may stay True when that ends (the general path checks precisely); it is never
    # False while one holds: every write of _requires_grad, _fw or _st sets it through `mark_ad`,
    # its one writer (needs_ad is the precise test; the fuzzer checks the invariant on every tensor
    # of every program).
    _ad = False
    # an Interpreter (dispatch/interpret.py) for subclasses that run every op by rules of their own
    _interpreter = None
    grad = None
    __array_priority__ = 1000  # make ndarray @ Tensor defer to Tensor
    __hash__ = object.__hash__

    def __init__(self, data: Any = None, *, dtype: Any = None, requires_grad: bool = False) -> None:
        self._data = _to_array(data, dtype)
        if requires_grad:
            self.requires_grad_(True)

    # -- storage -------------------------------------------------------------------
    def _storage(self) -> _Storage:
        st = self._st
        if st is _NO_STORAGE:
            st = self._st = _Storage()
            st.dual = self._fw is not None
            if not self._ad:  # (mark_dual's members: a tensor whose bit is set needs no call)
                st.members.append(weakref.ref(self))
            k = self._saved_at
            if k is not None and k is not UNWRITTEN:  # its note moves to the storage its views share
                st.values = [(k, weakref.ref(self))]
                self._saved_at = None
        return st

    @property
    def _version(self) -> int:
        return self._st.version

    @property
    def _is_view(self) -> bool:
        return self._base is not None

    # -- basic properties -------------------------------------------------------------
    @property
    def shape(self) -> tuple:
        return self._data.shape

    @shape.setter
    def shape(self, new_shape: Any) -> None:
        # ndarray's rule: the same memory seen with another shape, or an error if that needs a copy
        if self._ad or self._base is not None or self._st is not _NO_STORAGE:
            raise OpError(
                f"x.shape = {new_shape!r}: setting the shape in place is only possible on a tensor without "
                "a derivative, views or a base (its tape and tangents have the old shape); use "
                "x = x.reshape(...) instead"
            )
        d = self._data.view()
        try:
            d.shape = new_shape
        except (AttributeError, ValueError) as e:
            raise OpError(f"x.shape = {new_shape!r} (tensor of shape {self._data.shape}): {e}") from None
        self._data = d

    @property
    def flat(self) -> "FlatIter":
        """A flat view for indexing, as ndarray's: x.flat[i], x.flat[2:5] = v, iteration.

        >>> import pushforward as pf
        >>> x = pf.zeros(2, 2); x.flat[3] = 1.0; x.flat[3]
        tensor(1.)
        """
        return FlatIter(self)

    @property
    def dtype(self) -> np.dtype:
        return self._data.dtype

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def device(self) -> "device":
        return _CPU

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def data(self) -> "Tensor":
        return self.detach()

    @property
    def itemsize(self) -> int:
        return self._data.itemsize

    @property
    def size(self) -> "Size":
        """The element count, as ndarray's and the Array API's attribute; called, torch's method:
        x.size() is the shape, x.size(d) one dimension (docs/design.md, "x.size").

        >>> import pushforward as pf
        >>> x = pf.zeros(2, 3)
        >>> x.size, x.size(), x.size(1), x.size == 6
        (6, (2, 3), 3, True)
        """
        return Size(self._data.shape)

    def dim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return self._data.size

    def element_size(self) -> int:
        return self._data.itemsize

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f"

    def is_complex(self) -> bool:
        return self._data.dtype.kind == "c"

    def is_contiguous(self) -> bool:
        return self._data.flags.c_contiguous if type(self._data) is _ndarray else True

    @property
    def is_lazy(self) -> bool:
        """True when the tensor is backed by a Dask array (nothing computed yet).

        >>> import pushforward as pf
        >>> pf.zeros(2).is_lazy
        False
        """
        return type(self._data) is not _ndarray and is_lazy_array(self._data)

    def stride(self, dim: int | None = None) -> Any:
        """Strides in elements, as torch's: a tuple, or one dim's.

        >>> import pushforward as pf
        >>> pf.zeros(2, 3).t().stride()
        (1, 3)
        """
        d = self._data
        if is_lazy_array(d):
            raise OpError("stride(): a Dask-backed (lazy) tensor has no strides; call t.compute() first")
        strides = tuple(s // d.itemsize for s in d.strides)
        if dim is None:
            return strides
        if d.ndim == 0:
            raise OpIndexError(f"stride(): dimension specified as {dim} but tensor has no dimensions")
        return strides[check_dim(dim, d.ndim, "stride()")]

    def item(self) -> Any:
        if self._data.size != 1:
            raise OpError(f"item(): a Tensor with {self._data.size} elements cannot be converted to a scalar")
        return concrete(self._data).item()

    def tolist(self) -> Any:
        return concrete(self._data).tolist()

    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The underlying array (shares memory, the primal of a dual tensor as torch). Raises if the
        tensor requires grad, as torch; ``force=True`` or ``t.detach().numpy()`` give the values."""
        if self._requires_grad and not force:
            raise OpError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        return concrete(self._data)  # a lazy tensor computes (the explicit way out)

    # __array__, __array_ufunc__ and __array_function__ (NumPy protocols) are the NumPy face's (numpy/_api.py).
    # What needs the autodiff layer or the ops (grad_fn, backward, retain_grad, register_hook,
    # _has_tangent, _tangent_reprs, __getitem__, __setitem__) is attached by methods/bind.py: this core
    # module imports no higher layer (tests/test_layering.py).

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise OpTypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self) -> Iterator["Tensor"]:
        if self._data.ndim == 0:
            raise OpTypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise OpError(f"Boolean value of Tensor with {self._data.size} values is ambiguous")
        return bool(concrete(self._data))

    def __float__(self) -> float:
        check_number(self, "a Python float")
        return float(self.item())

    def __int__(self) -> int:
        # int() is piecewise constant: its derivative is zero, nothing is lost
        return int(self.item())

    def __complex__(self) -> complex:
        check_number(self, "a Python complex")
        return complex(self.item())

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise OpTypeError("only integer tensors of a single element can be converted to an index")
        return int(concrete(self._data))

    def __repr__(self) -> str:
        d = self._data
        body = np.array2string(d, separator=", ", prefix="tensor(") if type(d) is _ndarray else lazy_repr(d)
        extras = []
        if self._data.dtype not in (np.float64, np.int64, np.bool_) or self._data.size == 0:
            extras.append(f"dtype={_dtype_name(self._data.dtype)}")
        if self.grad_fn is not None:
            extras.append(f"grad_fn=<{self.grad_fn.name()}>")
        elif self._requires_grad:
            extras.append("requires_grad=True")
        extras.extend(self._tangent_reprs())
        return "tensor(" + body + "".join(", " + e for e in extras) + ")"

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        # torch: a 0-d tensor formats as its number (f"{loss:.4f}"); others only with an empty spec
        if self._data.ndim == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    # -- autograd metadata -----------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        if self._grad_fn is not None:
            if not requires_grad:
                raise OpError(
                    "you can only change requires_grad flags of leaf variables. If you want to use a "
                    "computed variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
                )
            return self
        if requires_grad and self._data.dtype.kind not in FLOATING:
            raise OpError(
                f"only Tensors of floating point and complex dtype can require gradients (got dtype {self._data.dtype})"
            )
        self._requires_grad = bool(requires_grad)
        if requires_grad:
            mark_ad(self)
        return self

    def detach(self) -> "Tensor":
        """A tensor sharing memory, cut from the tape and from every tangent (docs/design.md, "Mixing with reverse mode")."""
        out = _new(Tensor)
        out._data = self._data
        join_storage(out, self._storage())
        producer = (self._base if self._base is not None else self)._grad_fn
        if getattr(producer, "keep", None) is not None:
            # the node saved its output on this memory and finds a write by the written tensor's root
            # (engine/saved.before_write); the alias has no root of its own: note the node on the
            # memory, so that a write through the alias keeps the saved value too
            # (docs/design.md, "Overwritten saved values")
            add_saver(out, weakref.ref(producer))
        return out

    def detach_(self) -> "Tensor":
        if self._base is not None:
            raise OpError("detach_(): can't detach a view in place; use detach()")
        self._grad_fn = None
        self._requires_grad = False
        self._fw = None
        return self

    # -- conversions -------------------------------------------------------------------
    def float(self) -> "Tensor":
        return self.to(np.float32)

    def double(self) -> "Tensor":
        return self.to(np.float64)

    def long(self) -> "Tensor":
        return self.to(np.int64)

    def int(self) -> "Tensor":
        return self.to(np.int32)

    def bool(self) -> "Tensor":
        return self.to(np.bool_)

    def cfloat(self) -> "Tensor":
        return self.to(np.complex64)

    def cdouble(self) -> "Tensor":
        return self.to(np.complex128)

    def cpu(self) -> "Tensor":
        return self

    def type(self, dtype: Any = None) -> Any:
        return _dtype_name(self._data.dtype) if dtype is None else self.to(dtype)


class device(str):
    """torch's device object, for the only device: ``pf.device("cpu") == "cpu"``; others raise.

    >>> import pushforward as pf
    >>> pf.zeros(1).device == pf.device("cpu"), pf.device("cpu").type
    (True, 'cpu')
    """

    def __new__(cls, type: str = "cpu", index: int | None = None) -> "device":
        name = getattr(type, "type", type)
        if not isinstance(name, str) or name.split(":")[0] != "cpu":
            raise OpError(f"device {type!r} is not available; pushforward runs on the CPU only ('cpu')")
        obj = super().__new__(cls, "cpu")
        obj.type = "cpu"
        obj.index = index
        return obj

    def __repr__(self) -> str:
        return "device(type='cpu')"


_CPU = device("cpu")


class Size(int):
    """`x.size`: the element count (an int), callable as torch's `x.size()` / `x.size(dim)`.

    >>> s = Size((2, 3))
    >>> s + 1, s(), s(-1)
    (7, (2, 3), 3)
    """

    def __new__(cls, shape: tuple) -> "Size":
        self = int.__new__(cls, math.prod(shape))
        self._shape = shape
        return self

    def __reduce__(self) -> tuple:
        return (Size, (self._shape,))

    def __call__(self, dim: int | None = None) -> Any:
        if dim is None:
            return self._shape
        if not self._shape:
            raise OpIndexError(f"size(): dimension specified as {dim} but tensor has no dimensions")
        return self._shape[check_dim(dim, len(self._shape), "size()")]


class FlatIter:
    """`x.flat`: x seen as 1-D for reading (x.reshape(-1)[key]) and writing in place (the flat
    positions written are those of x in C order, whatever x's strides)."""

    def __init__(self, base: Tensor) -> None:
        self.base = base

    def __len__(self) -> int:
        return self.base._data.size

    def __iter__(self) -> Iterator[Tensor]:
        return iter(self.base.reshape(-1))

    def __getitem__(self, key: Any) -> Tensor:
        return self.base.reshape(-1)[key]

    def __setitem__(self, key: Any, value: Any) -> None:
        positions = np.arange(self.base._data.size)[key]
        self.base[np.unravel_index(positions, self.base._data.shape)] = value

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.asarray(self.base.reshape(-1), dtype=dtype)


_STORE_SUBSCR = dis.opmap["STORE_SUBSCR"]


def _storing_an_element(depth: int) -> bool:
    """Is this number conversion NumPy storing the tensor into one element of an array
    (`buf[i] = t`)? NumPy converts the value with float() there, called from C, so the nearest
    Python frame is the one running the statement, stopped at its subscript store; a Tensor's own
    __setitem__ and a list's never convert (docs/design.md, "No silent loss of a derivative")."""
    f = sys._getframe(depth + 1)
    return f.f_code.co_code[f.f_lasti] == _STORE_SUBSCR


def has_derivative(t: Tensor) -> bool:
    """Does t require grad or carry a tangent (at a live level)?"""
    return t._requires_grad or ((t._fw is not None or t._st.dual) and t._has_tangent())


def lost_derivative(t: Tensor, action: str) -> OpError:
    """The one error for a value whose derivative NumPy would drop: it names the fixes."""
    what = "requires grad" if t._requires_grad else "carries a tangent (it is a dual tensor)"
    return OpError(
        f"Can't {action}: the Tensor {what}, and its derivative would be lost. Writing into a NumPy "
        "buffer (buf[i] = t, buf[:] = t, buf += t, np.add(a, b, out=buf))? Allocate it as a tensor: "
        "np.zeros_like(x), np.zeros(shape, like=x), or `import pushforward.numpy as np` (whose "
        "np.zeros, np.empty, ... make tensors). Otherwise call NumPy functions on the tensor itself "
        "(np.sin(t), np.sum(t), ...), or take t.detach().numpy() or t.item() when only the values are wanted."
    )


def check_number(t: Tensor, what: str) -> None:
    """Refuse float()/complex() where the derivative would vanish without a word: a dual tensor
    always; a tensor on the tape when a pf.func transform traces it (JAX's rule) or when NumPy
    writes it into an element of an array. float(loss) for printing stays (torch's cut)."""
    if (t._fw is not None or t._st.dual) and t._has_tangent():
        raise lost_derivative(t, f"convert a Tensor to {what}")
    if t._requires_grad and (_autodiff.reverse_transform_running() or _storing_an_element(2)):
        raise lost_derivative(t, f"convert a Tensor to {what}")


def _dtype_name(dt: np.dtype) -> str:
    return "pushforward." + np.dtype(dt).name


def _to_array(data: Any, dtype=None) -> np.ndarray:
    """Convert user data to an ndarray (copying), following NumPy's dtype inference; a Dask array
    stays one (immutable: sharing it is a copy)."""
    if isinstance(data, Tensor):
        data = data._data
    if is_lazy_array(data):
        return lazy_array(data, dtype, "tensor")
    if isinstance(data, (list, tuple)) and any(isinstance(v, Tensor) for v in _flatten(data)):
        data = _nested_to_array(data)
    dt = None if dtype is None else np.dtype(dtype)
    arr = np.array(data, dtype=dt)
    if arr.dtype.kind not in "fciub":
        raise OpTypeError(f"tensor(): unsupported data of dtype {arr.dtype} (expected numbers)")
    return arr


def _flatten(seq):
    for v in seq:
        if isinstance(v, (list, tuple)):
            yield from _flatten(v)
        else:
            yield v


def _nested_to_array(seq):
    return [
        (_nested_to_array(v) if isinstance(v, (list, tuple)) else (v._data if isinstance(v, Tensor) else v))
        for v in seq
    ]


def wrap(a: Any) -> Tensor:
    """A fresh tensor around an ndarray (or NumPy scalar) without copying."""
    t = _new(Tensor)
    if type(a) is _ndarray:
        t._data = a
    elif is_lazy_array(a):
        t._data = a
        t._ad = True  # lazy tensors take the general path (core/lazy.py)
    else:
        t._data = np.asanyarray(a)  # (an ndarray subclass stays: compiler/recording.py)
    return t


def lazy_array(data: Any, dtype: Any, fn: str) -> Any:
    """A Dask array as a tensor's array (cast to dtype; nothing computed), checked like NumPy data."""
    if dtype is not None and data.dtype != np.dtype(dtype):
        data = data.astype(np.dtype(dtype))
    if data.dtype.kind not in "fciub":
        raise OpTypeError(f"{fn}(): unsupported dtype {data.dtype} (expected numbers)")
    Seen.chunk_bytes = max(Seen.chunk_bytes, int(np.prod(data.chunksize)) * data.dtype.itemsize)
    return data


def mark_ad(t: Tensor) -> None:
    """Set t's `_ad` bit: with set_history, the only writers; call it with every write that makes
    t require grad, carry a tangent, or join a storage that carried one."""
    t._ad = True


def set_history(t: Tensor, node: Any, nr: int = 0) -> None:
    """Make t output `nr` of tape node `node`: it requires grad, its gradient flows into node.

    >>> t = wrap(np.zeros(2)); set_history(t, None); t.requires_grad
    True
    """
    t._requires_grad = True
    t._grad_fn = node
    t._output_nr = nr
    t._ad = True  # (mark_ad's write, inline: every recorded op's output passes here)


def needs_ad(x: Tensor) -> bool:
    """The precise test the `_ad` bit stands for (tests check `x._ad or not needs_ad(x)`)."""
    return bool(x._requires_grad or x._fw is not None or x._st.dual)


def join_storage(t: Tensor, st: "_Storage | _NoStorage") -> "weakref.ref | None":
    """Put t on storage st (a view, alias or detached tensor): it sees st's version counter, and
    its `_ad` bit follows st's dual flag from now on (mark_dual). Returns a weak reference to t
    (the one it noted on st's members, if it had to), which a view's other lists reuse; None on a
    fresh tensor's placeholder."""
    t._st = st
    if type(t._data) is not _ndarray and is_lazy_array(t._data):
        t._ad = True  # (core/lazy.py)
    if not st.shared:  # a fresh tensor's placeholder: nothing to follow
        return None
    if st.dual:
        t._ad = True  # (mark_ad's write, inline)
        # (a dual storage's tensors all have the bit: mark_dual reads its members no more, nor does
        # vmap's promotion, which takes tensors without it; a view's loop of element reads skips the list)
        return weakref.ref(t)
    members = st.members
    ref = weakref.ref(t)
    members.append(ref)
    if len(members) > st._pruned_at:  # drop dead references, amortised over the appends
        members[:] = [r for r in members if r() is not None]
        st._pruned_at = 2 * len(members) + 8
    return ref


# The note of a tensor no program can write into (a Python scalar the dispatcher wrapped for the
# tape): its value is read as it is, at version 0 (note_value)
UNWRITTEN = (0,)


def note_value(t: Tensor) -> list:
    """The note of t's value saved now by a tape node, [version] (the node keeps it in place of the
    version it checks): shared by every node that saves t at that version. A write that overwrites
    the value appends a copy of it (engine/saved.py, which also moves a note past a write that
    leaves it). A fresh tensor holds its note itself until it gets a storage.

    >>> t = Tensor([1.0])
    >>> note_value(t) is note_value(t), note_value(t)
    (True, [0])
    """
    st = t._st
    if not st.shared:
        k = t._saved_at
        if k is None:
            k = t._saved_at = [0]
        return k
    vals = st.values
    if vals is None:
        vals = st.values = []
    elif vals[-1][1]() is t and vals[-1][0][0] == st.version and len(vals[-1][0]) == 1:
        return vals[-1][0]  # (the same tensor saved by the node before: one note)
    k = [st.version]
    vals.append((k, weakref.ref(t)))
    n = len(vals)
    if n >= 32 and not n & (n - 1):  # (at powers of two, amortised: notes no node holds go)
        vals[:] = [e for e in vals if _noted(e, st.version)]
    return k


def _noted(entry: tuple, version: int) -> bool:
    """Does a node still read this note of a value on memory now at `version` (its tensor alive,
    not yet copied, a node holding the note: references besides the entry, this frame's and the
    call's)?"""
    k, r = entry
    return r() is not None and len(k) == 1 and k[0] == version and sys.getrefcount(k) > 3


def add_saver(t: Tensor, ref: weakref.ref) -> None:
    """Note that the tape node `ref` refers to (weakly) saved t's value, on t's storage (made now
    for a fresh tensor: a rare case, which keeps `_storage` to one test for notes). Dead references
    are dropped as the list grows.

    >>> import weakref
    >>> class Node: pass
    >>> n, t = Node(), Tensor([1.0])
    >>> add_saver(t, weakref.ref(n)); t._storage().savers() is n
    True
    """
    st = t._storage()
    sv = st.savers
    if sv is None or sv is ref:
        sv = ref
    elif type(sv) is list:
        if sv[-1] is not ref:
            sv.append(ref)
            n = len(sv)
            if n >= 32 and not n & (n - 1):  # (at powers of two: amortised)
                sv[:] = [r for r in sv if r() is not None]
    else:
        sv = [sv, ref]
    st.savers = sv


def mark_dual(st: _Storage) -> None:
    """st now carries a tangent: every tensor on it may see one through its base."""
    if not st.dual:
        st.dual = True
        for r in st.members:
            t = r()
            if t is not None:
                mark_ad(t)


def alias(x: Tensor) -> Tensor:
    """A tensor sharing x's memory, version counter and tape identity, without tangents."""
    t = _new(Tensor)
    t._data = x._data
    st = x._st
    join_storage(t, st if st is not _NO_STORAGE else x._storage())
    if x._requires_grad:
        t._requires_grad = True
        t._ad = True  # (mark_ad's write, inline: every primal alias of the combined case passes here)
        # (a view's grad_fn is rebuilt after an in-place write through its root: the property does it)
        gf = x._grad_fn if x._base is None or x._view_version == st.version else x.grad_fn
        if gf is not None:
            t._grad_fn = gf
            t._output_nr = x._output_nr
        else:
            acc = x._grad_acc  # (grad_accumulator's first test, inline)
            t._grad_acc = acc if acc is not None else _autodiff.grad_accumulator(x)
    return t


class _Autodiff:
    """What core code calls of the autodiff layer, which it may not import (layers point one way):
    filled by `pushforward.methods.bind` when the package is imported."""

    grad_accumulator = None
    reverse_transform_running = staticmethod(lambda: False)  # set by func/reverse_levels.py


_autodiff = _Autodiff()
