"""Graph colorings of sparsity patterns, and the decompression of compressed derivatives.

Columns of one color share no row, so one tangent per color (the sum of the color's unit vectors)
gives every nonzero of J exactly: ``J[i, j] = (J @ S)[i, color[j]]``. Rows likewise for reverse
mode. For symmetric Hessians a star coloring (Gebremedhin, Manne, Pothen 2005: distance-1, and no
path on four vertices uses only two colors) lets every nonzero be read off ``H @ S`` without
solving: for each edge (i, j) either j is the only neighbour of i with j's color, or i the only
one of j with i's color.

>>> import numpy as np, scipy.sparse as sp
>>> column_coloring(sp.csr_array(np.eye(3, dtype=bool) | np.eye(3, k=1, dtype=bool))).tolist()
[1, 0, 1]
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import OpTypeError, OpValueError
from .patterns import as_bool_csr

# a sparsity pattern as users give it: any scipy.sparse matrix or array, or a dense 2-D array
PatternLike = sp.sparray | sp.spmatrix | np.ndarray

__all__ = [
    "PatternLike",
    "column_coloring",
    "row_coloring",
    "star_coloring",
    "as_pattern",
    "check_symmetric",
    "seed_matrix",
    "decompress_columns",
    "decompress_rows",
    "decompress_star",
]


def as_pattern(pattern: PatternLike, who: str, shape: tuple | None = None) -> sp.csr_array:
    """A user's pattern (scipy.sparse or array, boolean or 0/1) as a canonical boolean csr_array."""
    if sp.issparse(pattern):
        p = pattern
    elif isinstance(pattern, np.ndarray) or isinstance(pattern, list):
        p = np.asarray(pattern)
    else:
        raise OpTypeError(f"{who}: pattern must be a scipy.sparse matrix or a 2-D array, got {type(pattern).__name__}")
    if p.ndim != 2:
        raise OpValueError(f"{who}: pattern must be 2-D, got shape {tuple(p.shape)}")
    if p.dtype != np.bool_ and p.dtype.kind not in "iuf":
        raise OpTypeError(f"{who}: pattern must be boolean (or 0/1 numbers), got dtype {p.dtype}")
    if shape is not None and tuple(p.shape) != tuple(shape):
        raise OpValueError(f"{who}: pattern has shape {tuple(p.shape)}, but f's Jacobian has shape {tuple(shape)}")
    return as_bool_csr(p)


def _greedy(adj: sp.csr_array, order: np.ndarray) -> np.ndarray:
    """Greedy distance-1 coloring of the graph adj in the given vertex order."""
    n = adj.shape[0]
    color = np.full(n, -1, np.int64)
    mark = np.full(n + 1, -1, np.int64)  # mark[c] == v: color c is taken by a neighbour of v
    ptr, ind = adj.indptr, adj.indices
    for v in order.tolist():
        nb = color[ind[ptr[v] : ptr[v + 1]]]
        mark[nb[nb >= 0]] = v
        c = 0
        while mark[c] == v:
            c += 1
        color[v] = c
    return color


def _smallest_last(adj: sp.csr_array) -> np.ndarray:
    """Smallest-last order: repeatedly remove a vertex of smallest remaining degree; color in reverse."""
    n = adj.shape[0]
    deg = np.diff(adj.indptr).astype(np.int64)
    ptr, ind = adj.indptr, adj.indices
    buckets: dict = {}
    for v, d in enumerate(deg.tolist()):
        buckets.setdefault(d, set()).add(v)
    removed = np.zeros(n, bool)
    out = []
    low = 0
    for _ in range(n):
        while not buckets.get(low):
            low += 1
        v = buckets[low].pop()
        removed[v] = True
        out.append(v)
        for w in ind[ptr[v] : ptr[v + 1]].tolist():
            if not removed[w]:
                d = deg[w]
                buckets[d].discard(w)
                deg[w] = d - 1
                buckets.setdefault(d - 1, set()).add(w)
        low = max(low - 1, 0)
    return np.array(out[::-1], dtype=np.int64)


def _coloring_of(graph: sp.csr_array, order: str, who: str) -> np.ndarray:
    graph = graph.tolil()
    graph.setdiag(False)
    adj = sp.csr_array(graph)
    adj.eliminate_zeros()
    if order == "largest_first":
        deg = np.diff(adj.indptr)
        seq = np.argsort(-deg, kind="stable")
    elif order == "smallest_last":
        seq = _smallest_last(adj)
    else:
        raise OpValueError(f"{who}: order must be 'largest_first' or 'smallest_last', got {order!r}")
    return _greedy(adj, seq)


def column_coloring(pattern: PatternLike, order: str = "largest_first") -> np.ndarray:
    """A color per column of `pattern`, no two columns of one color sharing a row (distance-1
    coloring of the column intersection graph, greedy in `order`: "largest_first" or "smallest_last").

    >>> import numpy as np
    >>> column_coloring(np.array([[1, 1, 0], [0, 0, 1]])).tolist()
    [0, 1, 0]
    """
    p = as_pattern(pattern, "column_coloring")
    return _coloring_of(p.T @ p, order, "column_coloring")


def row_coloring(pattern: PatternLike, order: str = "largest_first") -> np.ndarray:
    """A color per row of `pattern`, no two rows of one color sharing a column.

    >>> import numpy as np
    >>> row_coloring(np.array([[1, 0], [1, 1], [0, 1]])).tolist()
    [1, 0, 1]
    """
    p = as_pattern(pattern, "row_coloring")
    return _coloring_of(p @ p.T, order, "row_coloring")


def check_symmetric(p: sp.csr_array, who: str) -> None:
    if p.shape[0] != p.shape[1]:
        raise OpValueError(f"{who}: a Hessian pattern must be square, got shape {tuple(p.shape)}")
    if (p != p.T).nnz:
        raise OpValueError(f"{who}: a Hessian pattern must be symmetric; pattern of shape {tuple(p.shape)} is not")


def star_coloring(pattern: PatternLike) -> np.ndarray:
    """A star coloring of a symmetric pattern's graph (greedy, largest-first): distance-1, and every
    path on four vertices has three colors, so every nonzero of H is recovered from H @ S.

    >>> import numpy as np
    >>> star_coloring(np.eye(6, dtype=bool) | np.eye(6, k=1, dtype=bool) | np.eye(6, k=-1, dtype=bool)).tolist()
    [2, 0, 1, 0, 2, 0]
    """
    p = as_pattern(pattern, "star_coloring")
    check_symmetric(p, "star_coloring")
    g = p.tolil()
    g.setdiag(False)
    adj = sp.csr_array(g)
    adj.eliminate_zeros()
    n = adj.shape[0]
    ptr, ind = adj.indptr.tolist(), adj.indices.tolist()
    nbrs = [ind[ptr[v] : ptr[v + 1]] for v in range(n)]
    color = [-1] * n
    deg = np.diff(adj.indptr)
    for v in np.argsort(-deg, kind="stable").tolist():
        color[v] = _star_color_of(v, nbrs, color)
    return np.array(color, dtype=np.int64)


def _star_color_of(v: int, nbrs: list, color: list) -> int:
    """The smallest color for v that makes no neighbour share it and no path on four vertices
    through v two-colored (v at an end: v-w-x-y; v inside: y-v-w-x)."""
    colored = [w for w in nbrs[v] if color[w] >= 0]
    forbidden = {color[w] for w in colored}
    count: dict = {}
    for w in colored:
        count[color[w]] = count.get(color[w], 0) + 1
    for w in colored:
        cw = color[w]
        for x in nbrs[w]:
            cx = color[x]
            if x == v or cx < 0 or cx in forbidden:
                continue
            if count[cw] >= 2 or any(color[y] == cw and y != w for y in nbrs[x]):
                forbidden.add(cx)
    c = 0
    while c in forbidden:
        c += 1
    return c


def seed_matrix(colors: np.ndarray) -> np.ndarray:
    """S (len(colors) x ncolors): S[j, c] = 1 where column j has color c."""
    k = int(colors.max()) + 1 if len(colors) else 0
    s = np.zeros((len(colors), k))
    s[np.arange(len(colors)), colors] = 1.0
    return s


def _with_values(p: sp.csr_array, values: np.ndarray) -> sp.csr_array:
    return sp.csr_array((values, p.indices.copy(), p.indptr.copy()), shape=p.shape)


def _rows_cols(p: sp.csr_array) -> tuple[np.ndarray, np.ndarray]:
    return np.repeat(np.arange(p.shape[0]), np.diff(p.indptr)), p.indices


def decompress_columns(p: sp.csr_array, colors: np.ndarray, b: np.ndarray) -> sp.csr_array:
    """J from B = J @ S (column coloring): J[i, j] = B[i, colors[j]]."""
    rows, cols = _rows_cols(p)
    return _with_values(p, b[rows, colors[cols]])


def decompress_rows(p: sp.csr_array, colors: np.ndarray, c: np.ndarray) -> sp.csr_array:
    """J from C = S^T @ J (row coloring): J[i, j] = C[colors[i], j]."""
    rows, cols = _rows_cols(p)
    return _with_values(p, c[colors[rows], cols])


def decompress_star(p: sp.csr_array, colors: np.ndarray, b: np.ndarray) -> sp.csr_array:
    """H from B = H @ S (star coloring of p): H[i, j] = B[i, colors[j]] when j is the only
    nonzero of row i with its color, else B[j, colors[i]]."""
    rows, cols = _rows_cols(p)
    count = (p.astype(np.int64) @ sp.csr_array(seed_matrix(colors).astype(np.int64))).toarray()
    alone = count[rows, colors[cols]] == 1
    values = np.where(alone, b[rows, colors[cols]], b[cols, colors[rows]])
    return _with_values(p, values)
