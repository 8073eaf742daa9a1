"""A lazy constant broadcast to a large shape without a task every chunk shares.

The backward of a reduction expands a lazy scalar cotangent (the seed of a gradient, times the
loss's constants) to its input's shape. As a Dask broadcast, every chunk of the result would
depend on the one task holding the scalar, and Dask's ordering then runs the data-free parts of
the backward (that scalar's broadcast times constants, a chunk of memory each) for all chunks
ahead of the data that consumes them: memory grows with the array instead of staying a few
chunks. A scalar whose whole graph is a few tasks over arrays of a few elements (cheap to
recompute) is instead computed inside each chunk's own task, so the broadcast's chunks are
independent roots, as `dask.array.full`'s are (docs/dask.md, "What streams").

>>> import numpy as np
>>> tiny_graph_of(np.float64(1.0)) is None
True
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

__all__ = ["tiny_graph_of", "broadcast_tiny"]

_MAX_TASKS = 16  # a scalar's graph: the seed, a reshape, a few products with constants
_MAX_ELEMENTS = 64  # of every array in it: recomputing it per chunk costs nothing


def tiny_graph_of(a: Any) -> tuple | None:
    """(graph, key) of a one-element Dask array whose graph is a few tasks over tiny arrays (each
    layer says its shape), optimized into a plain dict; None for anything else."""
    if not hasattr(a, "__dask_graph__") or a.size != 1:
        return None
    hlg = a.__dask_graph__()
    for layer in hlg.layers.values():
        shape = getattr(layer, "collection_annotations", None) or {}
        shape = shape.get("shape")
        if shape is None or any(s != s for s in shape) or int(np.prod(shape)) > _MAX_ELEMENTS:
            return None  # (unknown or large: recomputing it per chunk could cost a pass over data)
    if len(hlg) > _MAX_TASKS:
        return None
    import dask

    (opt,) = dask.optimize(a)
    (key,) = list(dask.core.flatten(opt.__dask_keys__()))
    return dict(opt.__dask_graph__()), key


def _block(graph: dict, key: Any, dtype: Any, block_info: Any = None) -> np.ndarray:
    from dask.local import get_sync

    value = np.asarray(get_sync(graph, key), dtype=dtype).reshape(())
    return np.broadcast_to(value, block_info[None]["chunk-shape"])  # (zero strides: no memory)


def broadcast_tiny(graph_key: tuple, shape: tuple, chunks: tuple, dtype: Any) -> Any:
    """The scalar that `tiny_graph_of` returned, broadcast to `shape` in `chunks`: each chunk's task
    computes it (a few tasks over tiny arrays) and shares no task with the other chunks."""
    import dask.array as da

    graph, key = graph_key
    fn = partial(_block, graph, key, np.dtype(dtype))
    return da.map_blocks(fn, chunks=chunks, dtype=dtype, meta=np.empty((0,) * len(shape), dtype=dtype))
