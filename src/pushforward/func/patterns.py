"""Dependency patterns as sparse boolean matrices, and the index maps the detection rules use.

A pattern of a tensor with m elements over n inputs is a boolean ``csr_array`` of shape (m, n):
row i holds the inputs element i (C order) depends on. ``None`` stands for "depends on nothing".
Row selections (``take_rows``) are the exact rule of every op that only moves elements.

>>> import numpy as np
>>> p = identity(3)
>>> build(take_rows(p, np.array([2, -1, 0]))).toarray().astype(int).tolist()
[[0, 0, 1], [0, 0, 0], [1, 0, 0]]
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = [
    "fast_csr",
    "identity",
    "empty",
    "take_rows",
    "union",
    "union_all",
    "row_union",
    "selector",
    "gram",
    "broadcast_rows",
    "Unbuilt",
    "build",
    "as_bool_csr",
]


try:  # SciPy's own merge of two canonical CSR matrices, without the wrapper's checks and copies
    from scipy.sparse._sparsetools import csr_plus_csr as _csr_plus
except ImportError:  # pragma: no cover - another SciPy layout: the public operator
    _csr_plus = None

_INT32_MAX = np.iinfo(np.int32).max
_new = object.__new__


def fast_csr(indices: np.ndarray, indptr: np.ndarray, shape: tuple) -> sp.csr_array:
    """A boolean csr_array from canonical parts (sorted, unique column indices per row), without
    SciPy's checks and copies: detection builds many of them, and the rules guarantee the form."""
    dt = np.int32 if max(shape[0], shape[1], len(indices)) < _INT32_MAX else np.int64
    a = _new(sp.csr_array)
    a._shape = (int(shape[0]), int(shape[1]))
    a.maxprint = 50
    a.indices = indices.astype(dt, copy=False)
    a.indptr = indptr.astype(dt, copy=False)
    a.data = np.ones(len(indices), bool)
    a.has_canonical_format = True
    return a


def as_bool_csr(a) -> sp.csr_array:
    """A canonical boolean csr_array (sorted indices, no duplicates, no explicit False)."""
    a = sp.csr_array(a)
    if a.dtype != np.bool_:
        a = a.astype(bool)
    a.sum_duplicates()
    a.eliminate_zeros()
    return a


def identity(n: int) -> sp.csr_array:
    """Each of n inputs depends on itself."""
    return fast_csr(np.arange(n), np.arange(n + 1), (n, n))


def empty(m: int, n: int) -> sp.csr_array:
    """m elements that depend on nothing."""
    return fast_csr(np.zeros(0, np.int64), np.zeros(m + 1, np.int64), (m, n))


class Unbuilt:
    """A pattern not built yet: the union of row selections ("terms": a built pattern and the row
    of it each element takes, -1 for none). Moves and element-wise ops only compose these index
    maps; the sparse matrix is built once, when a rule needs it (`build`)."""

    __slots__ = ("terms", "shape", "built")

    def __init__(self, terms: list, shape: tuple) -> None:
        self.terms = terms
        self.shape = shape
        self.built = None


def _terms(p) -> list:
    return p.terms if type(p) is Unbuilt else [(p, None)]


def take_rows(p, ids: np.ndarray):
    """Rows `ids` of p (an id of -1 gives an empty row): the pattern of an op that moves elements."""
    if p is None:
        return None
    ids = np.asarray(ids, dtype=np.int64).ravel()
    neg = bool(ids.size) and ids.min() < 0
    terms = []
    for base, old in _terms(p):
        if old is None:
            new = ids
        elif not neg:
            new = old[ids]
        else:
            new = np.where(ids >= 0, old[np.maximum(ids, 0)], -1)
        terms.append((base, new))
    return Unbuilt(terms, (len(ids), p.shape[1]))


def union(a, b):
    """Element-wise OR of two patterns of one shape (None is empty)."""
    if a is None or a is b:
        return b if a is None else a
    if b is None:
        return a
    terms = list(_terms(a))
    seen = {(id(x), id(i)) for x, i in terms}
    terms += [(x, i) for x, i in _terms(b) if (id(x), id(i)) not in seen]
    out = Unbuilt(terms, a.shape)
    return build(out) if len(terms) > _MAX_TERMS else out


def build(p) -> sp.csr_array | None:
    """The pattern as a canonical boolean csr_array."""
    if type(p) is not Unbuilt:
        return p
    if p.built is None:
        singles = [t for t in p.terms if _single(t[0])]
        out = _build_singles(singles, p.shape) if singles else None
        for base, ids in p.terms:
            if not _single(base):
                out = _plus(out, base if ids is None else _take_built(base, ids))
        p.built = out
    return p.built


_MAX_TERMS = 16


def _single(base: sp.csr_array) -> bool:
    """Does every row of base hold exactly one input (an input itself, a permutation of inputs)?"""
    flag = base.__dict__.get("_pf_single")
    if flag is None:
        flag = base.__dict__["_pf_single"] = base.nnz == base.shape[0] and bool((np.diff(base.indptr) == 1).all())
    return flag


def _build_singles(terms: list, shape: tuple) -> sp.csr_array:
    """The union of selections of one-input-per-row patterns: each term is one column of inputs
    per element; sort each element's row of columns and drop repeats."""
    m, n = shape
    if len(terms) == 1 and terms[0][1] is None:
        return terms[0][0]
    cols = []
    for base, ids in terms:
        if ids is None:
            cols.append(base.indices.astype(np.int64))
        elif ids.size and ids.min() < 0:
            cols.append(np.where(ids >= 0, base.indices[np.maximum(ids, 0)], n).astype(np.int64))
        else:
            cols.append(base.indices[ids].astype(np.int64))
    k = len(cols)
    if k <= _NETWORK:  # few terms: a sorting network over whole columns beats a sort per row
        for i in range(k - 1):
            for j in range(k - 1 - i):
                lo = np.minimum(cols[j], cols[j + 1])
                cols[j + 1] = np.maximum(cols[j], cols[j + 1])
                cols[j] = lo
        grid = np.stack(cols, axis=1)
    else:
        grid = np.stack(cols, axis=1)
        grid.sort(axis=1)
    keep = grid != n
    keep[:, 1:] &= grid[:, 1:] != grid[:, :-1]
    ptr = np.zeros(m + 1, np.int64)
    np.cumsum(np.count_nonzero(keep, axis=1), out=ptr[1:])
    return fast_csr(grid[keep], ptr, shape)


_NETWORK = 8


def _take_built(p: sp.csr_array, ids: np.ndarray) -> sp.csr_array:
    """Rows `ids` of a built pattern (-1: an empty row), built."""
    indptr = p.indptr
    counts = np.diff(indptr)
    if ids.size and ids.min() < 0:
        valid = ids >= 0
        ids = np.where(valid, ids, 0)
        c = np.where(valid, counts[ids], 0)
    else:
        c = counts[ids]
    out_ptr = np.zeros(len(ids) + 1, dtype=indptr.dtype)
    np.cumsum(c, out=out_ptr[1:])
    total = int(out_ptr[-1])
    pos = np.arange(total, dtype=indptr.dtype) + np.repeat(indptr[ids] - out_ptr[:-1], c)
    return fast_csr(p.indices[pos], out_ptr, (len(ids), p.shape[1]))


def _plus(a: sp.csr_array | None, b: sp.csr_array) -> sp.csr_array:
    """OR of two built patterns, by SciPy's merge of canonical CSR matrices."""
    if a is None:
        return b
    if _csr_plus is None or a.indptr.dtype != b.indptr.dtype or a.indices.dtype != a.indptr.dtype:
        return as_bool_csr(a + b)
    m, n = a.shape
    nnz = a.nnz + b.nnz
    dt = a.indptr.dtype
    ptr, ind, data = np.empty(m + 1, dt), np.empty(nnz, dt), np.empty(nnz, bool)
    _csr_plus(m, n, a.indptr, a.indices, a.data, b.indptr, b.indices, b.data, ptr, ind, data)
    return fast_csr(ind[: ptr[-1]], ptr, (m, n))


def union_all(ps) -> sp.csr_array | None:
    out = None
    for p in ps:
        out = union(out, p)
    return out


def row_union(p: sp.csr_array | None, n: int) -> sp.csr_array | None:
    """One row: every input some element of p depends on."""
    p = build(p)
    if p is None or p.nnz == 0:
        return None
    cols = np.unique(p.indices)
    return fast_csr(cols, np.array([0, len(cols)]), (1, n))


def selector(rows: np.ndarray, cols: np.ndarray, shape: tuple) -> sp.csr_array:
    """The boolean matrix with ones at (rows[k], cols[k]) (repeats allowed)."""
    m = sp.csr_array((np.ones(len(rows), bool), (np.asarray(rows), np.asarray(cols))), shape=shape)
    m.sum_duplicates()
    return m


def gram(a: sp.csr_array | None, b: sp.csr_array | None = None) -> sp.csr_array | None:
    """a^T b + b^T a (a^T a when b is None): the input pairs that meet in one element."""
    if a is None:
        return None
    a = build(a)
    if b is None or b is a:
        return a.T @ a
    b = build(b)
    return _plus(a.T @ b, b.T @ a)


def broadcast_rows(p: sp.csr_array | None, shape: tuple, out_shape: tuple) -> sp.csr_array | None:
    """The pattern of a tensor of `shape` broadcast to `out_shape`."""
    if p is None or tuple(shape) == tuple(out_shape):
        return p
    size = int(np.prod(shape, dtype=np.int64))
    ids = np.broadcast_to(np.arange(size, dtype=np.int64).reshape(shape), out_shape)
    return take_rows(p, ids)
