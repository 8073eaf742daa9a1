"""A tiny pytree: nested tuples, lists, dicts and namedtuples whose leaves are tensors (or anything).

>>> leaves, spec = tree_flatten((1, [2, {"a": 3}]))
>>> leaves, tree_unflatten([x * 10 for x in leaves], spec)
([1, 2, 3], (10, [20, {'a': 30}]))
"""

from __future__ import annotations

from typing import Any, NamedTuple, Sequence

__all__ = ["TreeSpec", "tree_flatten", "tree_unflatten"]


class TreeSpec(NamedTuple):
    """Structure of a pytree: ``kind`` is "leaf", "none", "tuple", "list", "dict" or "namedtuple"."""

    kind: str
    meta: Any = None
    children: tuple = ()

    @property
    def num_leaves(self) -> int:
        if self.kind == "leaf":
            return 1
        return sum(c.num_leaves for c in self.children)


_LEAF = TreeSpec("leaf")
_NONE = TreeSpec("none")


def tree_flatten(tree: Any) -> tuple[list, TreeSpec]:
    """Flatten a nested tuple/list/dict into (leaves, spec); ``None`` is an empty subtree.

    >>> leaves, spec = tree_flatten({"a": (1, 2), "b": [3]})
    >>> leaves, tree_unflatten([10, 20, 30], spec)
    ([1, 2, 3], {'a': (10, 20), 'b': [30]})
    """
    leaves: list = []
    spec = _flatten_into(tree, leaves)
    return leaves, spec


def _flatten_into(tree: Any, leaves: list) -> TreeSpec:
    if tree is None:
        return _NONE
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return TreeSpec("namedtuple", type(tree), tuple(_flatten_into(c, leaves) for c in tree))
    if isinstance(tree, tuple):
        return TreeSpec("tuple", None, tuple(_flatten_into(c, leaves) for c in tree))
    if isinstance(tree, list):
        return TreeSpec("list", None, tuple(_flatten_into(c, leaves) for c in tree))
    if isinstance(tree, dict):
        keys = tuple(tree.keys())
        return TreeSpec("dict", keys, tuple(_flatten_into(tree[k], leaves) for k in keys))
    leaves.append(tree)
    return _LEAF


def tree_unflatten(leaves: Sequence, spec: TreeSpec) -> Any:
    """Inverse of :func:`tree_flatten`."""
    it = iter(leaves)
    out = _build(it, spec)
    rest = list(it)
    if rest:
        raise ValueError(f"tree_unflatten: {len(rest)} leaves left over for a tree of {spec.num_leaves} leaves")
    return out


def _build(it, spec: TreeSpec) -> Any:
    kind = spec.kind
    if kind == "leaf":
        try:
            return next(it)
        except StopIteration:
            raise ValueError("tree_unflatten: too few leaves for the tree structure") from None
    if kind == "none":
        return None
    children = [_build(it, c) for c in spec.children]
    if kind == "tuple":
        return tuple(children)
    if kind == "namedtuple":
        return spec.meta(*children)
    if kind == "list":
        return children
    return dict(zip(spec.meta, children))


def _same_structure(a: TreeSpec, b: TreeSpec) -> bool:
    if a.kind != b.kind:
        # a tuple and a list with the same leaves are accepted as the same structure
        if {a.kind, b.kind} <= {"tuple", "list", "namedtuple"}:
            return len(a.children) == len(b.children) and all(map(_same_structure, a.children, b.children))
        return False
    if a.kind == "dict" and set(a.meta) != set(b.meta):
        return False
    if a.kind == "dict":
        bmap = dict(zip(b.meta, b.children))
        return all(_same_structure(c, bmap[k]) for k, c in zip(a.meta, a.children))
    return len(a.children) == len(b.children) and all(map(_same_structure, a.children, b.children))


def _reorder_like(tree: Any, spec: TreeSpec) -> list:
    """Leaves of `tree` in the order `spec` lists them (dict keys may come in any order)."""
    if spec.kind == "leaf":
        return [tree]
    if spec.kind == "none":
        return []
    if spec.kind == "dict":
        return [leaf for k, c in zip(spec.meta, spec.children) for leaf in _reorder_like(tree[k], c)]
    return [leaf for sub, c in zip(tree, spec.children) for leaf in _reorder_like(sub, c)]


# -- helpers ------------------------------------------------------------------------------------
