"""What a backward formula reads of the op's tensors: the saved set, derived from the formulas.

A tape node keeps an input (or output) only when a formula that will run reads it: the
formula of input i runs only when input i needs a gradient, so the saved set depends on
which inputs need one. A formula that reads only an input's shape, dtype or ndim (or a
list input's length) gets its metadata, not the tensor: an in-place write into it later
is then no error (torch's rule). Tests of conditional formulas that read only metadata and
non-tensor arguments (`x if rounding_mode is None else y`, `... if self.dtype.kind == "c"
else ...`) are evaluated when the node is recorded, so a branch that will not run saves
nothing.

>>> import ast
>>> r = Reads({"self", "other"}, {"result"})
>>> sorted(r.of(ast.parse("grad * other.conj() + self.shape[0]", mode="eval").body, {}).items())
[('other', 2), ('self', 1)]
"""

from __future__ import annotations

import ast
import itertools

META_ATTRS = frozenset({"shape", "ndim", "dtype"})  # attributes a saved _Meta has
META_CALLS = frozenset({"numel", "dim", "size"})  # methods a saved _Meta has
NOTHING, META, VALUE = 0, 1, 2  # save modes, ordered: max() combines them


class Reads:
    """Per name (tensor parameter or output): the save mode a formula needs.

    `tensors`: the op's Tensor parameter names; `results`: its output names (`result`,
    `result0`, ...); `lists`: the Tensor[] parameters (their length is metadata too).
    """

    def __init__(
        self, tensors: set[str], results: set[str], lists: set[str] = frozenset(), args: set[str] = frozenset()
    ) -> None:
        self.names = set(tensors) | set(results)
        self.lists = set(lists)
        self.args = set(args)

    # -- static tests -----------------------------------------------------------------------
    def is_static(self, test: ast.expr) -> bool:
        """Can the test be evaluated when the node is recorded? It may read non-tensor
        arguments and the metadata of tensors, nothing else (no value, no `grad`)."""
        reads = self.of(test, {})
        if any(m == VALUE for m in reads.values()):
            return False
        free = {n.id for n in ast.walk(test) if isinstance(n, ast.Name)}
        return not (
            free
            - self.names
            - self.args
            - {"None", "True", "False", "len", "isinstance", "int", "float", "complex", "bool", "tuple", "list"}
        )

    def static_tests(self, tree: ast.expr) -> list[str]:
        """Source of every static IfExp test in the formula (in order, without repeats)."""
        out = []
        for node in ast.walk(tree):
            if isinstance(node, ast.IfExp) and self.is_static(node.test):
                src = ast.unparse(node.test)
                if src not in out:
                    out.append(src)
        return out

    # -- reads ------------------------------------------------------------------------------
    def of(self, tree: ast.expr, outcome: dict[str, bool], aliases: dict[str, str] | None = None) -> dict[str, int]:
        """{name: mode} read by the formula, given the outcome of its static tests (a test
        absent from `outcome` counts both branches)."""
        out: dict[str, int] = {}
        self._walk(tree, None, None, outcome, dict(aliases or {}), out)
        return out

    def _add(self, out: dict, name: str, mode: int) -> None:
        out[name] = max(out.get(name, NOTHING), mode)

    def _walk(self, node, parent, grand, outcome, aliases, out) -> None:
        if isinstance(node, ast.Name):
            name = aliases.get(node.id, node.id)
            if name is None or name not in self.names:
                return
            self._add(out, name, self._mode(node, parent, grand, name))
            return
        if isinstance(node, ast.IfExp):
            test = ast.unparse(node.test)
            if test in outcome and self.is_static(node.test):
                self._walk(node.test, node, parent, outcome, aliases, out)
                self._walk(node.body if outcome[test] else node.orelse, node, parent, outcome, aliases, out)
                return
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            inner = dict(aliases)
            for gen in node.generators:
                self._walk(gen.iter, gen, node, outcome, inner, out)
                # `for t in tensors`: t is an element of a list parameter, read as the list is
                src = gen.iter.id if isinstance(gen.iter, ast.Name) else None
                src = aliases.get(src, src)
                for t in ast.walk(gen.target):
                    if isinstance(t, ast.Name):
                        inner[t.id] = src if (isinstance(gen.target, ast.Name) and src in self.lists) else None
                for cond in gen.ifs:
                    self._walk(cond, gen, node, outcome, inner, out)
            elts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            for e in elts:
                self._walk(e, node, parent, outcome, inner, out)
            return
        if isinstance(node, ast.Lambda):
            inner = dict(aliases)
            for a in node.args.args:
                inner[a.arg] = None
            self._walk(node.body, node, parent, outcome, inner, out)
            return
        if isinstance(node, ast.comprehension):  # only reached through the comprehension case above
            return
        for child in ast.iter_child_nodes(node):
            self._walk(child, node, parent, outcome, aliases, out)

    def _mode(self, node: ast.Name, parent, grand, name: str) -> int:
        if isinstance(parent, ast.Attribute) and parent.value is node:
            if parent.attr in META_ATTRS:
                return META
            if parent.attr in META_CALLS and isinstance(grand, ast.Call) and grand.func is parent:
                return META
        if name in self.lists:
            if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id == "len":
                return META
            if isinstance(parent, ast.comprehension) and parent.iter is node:
                return META  # iterating; what the loop variable reads is counted where it is read
        return VALUE


def plan(
    formulas: list[tuple[str, str]],
    diff: list[str],
    tensors: list[str],
    results: list[str],
    lists: set[str],
    args: set[str],
) -> tuple[list[str], dict[tuple[bool, ...], list[tuple]]]:
    """The saved set of every needs pattern, for every outcome of the static tests.

    `formulas`: (input, formula) backward formulas; `diff`: the differentiable inputs in
    order (bit i of a needs mask is diff[i]). Returns (tests, {outcome: table}) where
    table[mask] = (modes per tensor, modes per output) and table[0] is None.
    """
    r = Reads(set(tensors), set(results) | {"result"}, lists, args)
    trees = {inp: ast.parse(f, mode="eval").body for inp, f in formulas}
    tests: list[str] = []
    for t in trees.values():
        for s in r.static_tests(t):
            if s not in tests:
                tests.append(s)
    tables = {}
    for values in itertools.product((True, False), repeat=len(tests)):
        outcome = dict(zip(tests, values))
        per_input = {inp: r.of(t, outcome) for inp, t in trees.items()}
        if len(results) > 1:  # `result` in a multi-output formula means result0
            for reads in per_input.values():
                if "result" in reads:
                    m = reads.pop("result")
                    reads[results[0]] = max(reads.get(results[0], NOTHING), m)
        table: list = [None]
        for mask in range(1, 1 << len(diff)):
            reads: dict[str, int] = {}
            for i, inp in enumerate(diff):
                if mask >> i & 1:
                    for n, m in per_input.get(inp, {}).items():
                        reads[n] = max(reads.get(n, NOTHING), m)
            # an output is kept whole or not at all (its tape identity comes with it)
            table.append(
                (
                    tuple(reads.get(p, NOTHING) for p in tensors),
                    tuple(VALUE if reads.get(o, NOTHING) else NOTHING for o in results),
                )
            )
        tables[values] = table
    return tests, tables
