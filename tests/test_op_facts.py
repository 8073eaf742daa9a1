"""Every fact about an op lives in derivatives.yaml: the loader validates the keys that say how its
result is laid out, what Dask cannot run, how it moves sparsity patterns and what its second
derivatives are; the op records carry them; and no module keeps a table of op names beside the
YAML (the source is read for them)."""

from __future__ import annotations

import ast
import operator
import textwrap
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("yaml")

import pushforward as pf  # noqa: E402
from pushforward.codegen.load import SpecError, load  # noqa: E402
from pushforward.dispatch.lazyops import DENIED, REASONS  # noqa: E402
from pushforward.ops import generated as G  # noqa: E402

PKG = Path(pf.__file__).resolve().parent
# where op names legitimately appear in bulk: the YAML's own compiler and its output, and the op
# database (the samples each op is tested on, keyed by op)
NOT_SCANNED = ("ops/generated.py", "codegen/", "testing/")


def _load(tmp_path, text: str):
    p = tmp_path / "d.yaml"
    p.write_text(textwrap.dedent(text))
    return load(p)


def _error(tmp_path, text: str) -> str:
    with pytest.raises(SpecError) as e:
        _load(tmp_path, text)
    return str(e.value)


_SIN = """
- name: s(Tensor self) -> Tensor
  kernel: xp.sin
  self: grad * self.cos().conj()
  result: auto_element_wise
"""
_SUM = """
- name: r(Tensor self, int? dim=None) -> Tensor
  kernel: K.sum
  batch: reduce(dim)
  self: grad.expand(self.shape)
  result: auto_linear
"""


@pytest.mark.parametrize(
    "entry, extra, what",
    [
        (_SUM, "  layout: fortran\n", "unknown layout 'fortran'"),
        (_SUM, "  view: true\n  layout: contiguous\n", "on a composite or a view"),
        (_SUM, "  sparsity: scatter\n", "unknown sparsity rule 'scatter'"),
        (_SIN, "  sparsity: reduction\n", "contradicts 'batch: elementwise'"),
        (_SUM, "  sparsity: reduction(dim)\n", "takes no argument"),
        (_SUM, "  sparsity: contraction(dim)\n", "einsum equation"),
        (_SUM, "  curvature: linear\n", "repeats what 'auto_linear' says"),
        (_SIN, "  curvature: bilinear\n", "two differentiable Tensors"),
        (_SIN, "  curvature: curly\n", "unknown curvature 'curly'"),
        (_SIN, "  dask: no_idea\n", "unknown dask reason 'no_idea'"),
        (_SIN, "  scalar_operator: add\n", "needs two Tensor parameters"),
        (_SIN, "  scalar_operator: pow\n", "unknown scalar_operator 'pow'"),
        (_SIN, "  dasky: no_linalg\n", "unknown key 'dasky'"),
    ],
)
def test_the_loader_rejects_bad_or_contradicting_facts_naming_the_entry(tmp_path, entry, extra, what):
    msg = _error(tmp_path, entry + extra)
    assert what in msg and "derivatives.yaml line 2, entry '" in msg


def test_composites_calling_one_helper_agree_about_dask(tmp_path):
    msg = _error(
        tmp_path,
        """
        - name: one(Tensor self) -> Tensor
          composite: c_median(self, None, False)
          dask: no_sort
        - name: two(Tensor self) -> Tensor
          composite: c_median(self, None, True)
        """,
    )
    assert "entry 'two'" in msg and "c_median" in msg and "'one'" in msg
    msg = _error(tmp_path, "- name: three(Tensor self) -> Tensor\n  composite: self.sin()\n  dask: no_sort\n")
    assert "entry 'three'" in msg and "calls no helper" in msg


def test_adding_an_op_lists_every_key():
    from pushforward.codegen.load import KNOWN_KEYS

    page = (PKG.parents[1] / "docs" / "adding-an-op.md").read_text()
    rows = {line.split("|")[1].strip() for line in page.splitlines() if line.startswith("| `")}
    listed = {k.strip("` ") for row in rows for k in row.split(",")}
    assert KNOWN_KEYS <= listed, sorted(KNOWN_KEYS - listed)


def test_the_records_carry_the_yaml_facts():
    assert G.SUM.layout == "contiguous" and G.SUM.contiguous and G.SUM.sparsity == "reduction"
    assert G.INVERSE.layout == "column_major" and not G.INVERSE.contiguous
    assert G.MM.sparsity == "contraction(ij,jk->ik)" and G._EINSUM_PAIR.sparsity == "contraction(equation)"
    assert (G.ADD.curvature, G.MUL.curvature, G.DIV.curvature, G.SIN.curvature) == (
        "linear",
        "bilinear",
        "quotient",
        None,
    )
    assert G.SIN.layout is None and G.SIN.sparsity is None
    assert G.DIV.scalar_operator == (operator.truediv, (None,)) and G.ADD.scalar_operator == (operator.add, (1,))
    assert G.SIN.scalar_operator is None and G.POW.scalar_operator is None
    # what Dask cannot run: kernel ops by name, composites' helpers by the name methods/lazy.py guards
    assert DENIED["det"] == REASONS["no_linalg"] and DENIED["sort"] == REASONS["no_sort"]
    assert DENIED["eigh"] == REASONS["no_linalg"]  # (linalg_eigh's helper c_eigh)
    assert set(DENIED.values()) <= set(REASONS.values())


def test_a_contiguous_op_has_a_contiguous_tangent_and_a_column_major_one_a_column_major_tangent():
    import pushforward.autograd.forward_ad as fwAD

    a = pf.tensor(np.random.default_rng(0).random((3, 3)) + 3 * np.eye(3)).mT  # (not C-contiguous)
    with fwAD.dual_level():
        x = fwAD.make_dual(a, pf.ones(3, 3).mT)
        t = fwAD.unpack_dual(pf.cumsum(x, 0)).tangent
        assert t._data.flags.c_contiguous
        t = fwAD.unpack_dual(pf.inverse(x)).tangent
        assert t._data.mT.flags.c_contiguous


# ----------------------------------------------------------------------------- no side tables


def _op_names() -> set[str]:
    names = set()
    for e in load():
        names.add(e.name)
        names.update(e.aliases)
    return names


def _strings(node: ast.AST) -> list[str]:
    """The strings of a literal table: a set, list, tuple, dict's keys, `frozenset({...})`,
    `dict.fromkeys(...)`, `"a b c".split()`, and `{**a, **b}` of those."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Set, ast.List, ast.Tuple)):
        return [s for e in node.elts for s in _strings(e)]
    if isinstance(node, ast.Dict):
        return [s for k, v in zip(node.keys, node.values) for s in (_strings(k) if k is not None else _strings(v))]
    if isinstance(node, ast.Call):
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr == "split" and isinstance(f.value, ast.Constant):
            return str(f.value.value).split()
        if (isinstance(f, ast.Name) and f.id in ("frozenset", "set", "tuple", "list", "dict")) or (
            isinstance(f, ast.Attribute) and f.attr == "fromkeys"
        ):
            return [s for a in node.args[:1] for s in _strings(a)]
    return []


def _is_op_name(node: ast.AST) -> bool:
    """An op record's name: `op.name`, `rec.name`, `self.op.name`, `node.op.name`."""
    if not (isinstance(node, ast.Attribute) and node.attr == "name"):
        return False
    v = node.value
    return (isinstance(v, ast.Name) and v.id in ("op", "rec", "record")) or (
        isinstance(v, ast.Attribute) and v.attr == "op"
    )


def side_tables(source: str, op_names: set[str]) -> list[tuple[int, list[str]]]:
    """(line, op names) of every table of two or more op names that the code consults with an op's
    name: `op.name in ("sum", "mean")`, `op.name in _TABLE`, `_TABLE.get(op.name)`, `_TABLE[op.name]`
    (a module-level literal table). One op compared alone (`op.name == "expand"`) is a rule's own
    case, not a table."""
    tree = ast.parse(source)
    tables = {}
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            found = [s for s in _strings(node.value) if s in op_names]
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(t, ast.Name) and len(found) >= 2:
                    tables[t.id] = found
    hits = []

    def table_of(n: ast.AST) -> list[str]:
        if isinstance(n, ast.Name):
            return tables.get(n.id, [])
        found = [s for s in _strings(n) if s in op_names]
        return found if len(found) >= 2 else []

    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and _is_op_name(node.left):
            for op, right in zip(node.ops, node.comparators):
                if isinstance(op, (ast.In, ast.NotIn)) and table_of(right):
                    hits.append((node.lineno, table_of(right)))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            if node.args and _is_op_name(node.args[0]) and table_of(node.func.value):
                hits.append((node.lineno, table_of(node.func.value)))
        elif isinstance(node, ast.Subscript) and _is_op_name(node.slice) and table_of(node.value):
            hits.append((node.lineno, table_of(node.value)))
    return hits


# module-level tables of other vocabularies whose words are op names too
_OTHER_VOCABULARIES = {
    ("kernels/scatter.py", "_REDUCE"): "the values of scatter_reduce's `reduce` argument (torch's names)",
    ("numpy/_api.py", "_REDUCE"): "NumPy's ufunc names: ufunc.reduce -> the op computing it",
}


def name_lists(source: str, op_names: set[str]) -> list[tuple[int, str]]:
    """(line, name) of every module-level literal table of three or more strings, all of them op
    names (a list of ops kept for some purpose), other than `__all__`."""
    hits = []
    for node in ast.parse(source).body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            strings = _strings(node.value)
            if len(strings) >= 3 and all(s in op_names for s in strings):
                hits += [(node.lineno, t.id) for t in targets if isinstance(t, ast.Name) and t.id != "__all__"]
    return hits


def test_the_side_table_reader_finds_tables():
    names = {"sum", "mean", "det", "logdet", "expand"}
    src = textwrap.dedent(
        """
        _T = frozenset({"sum", "mean"})
        _D = {**dict.fromkeys("det logdet".split(), "why")}
        def f(op):
            a = op.name in _T
            b = _D.get(op.name)
            c = op.name in ("sum", "mean")
            d = _D[self.op.name]
            e = op.name == "expand"  # (one op: not a table)
            g = op.batch in ("sum", "mean")  # (not an op's name)
        """
    )
    assert [line for line, _ in side_tables(src, names)] == [5, 6, 7, 8]
    src = '__all__ = ["sum", "mean", "det"]\nLIST = ("sum", "mean", "det")\nMIXED = ("sum", "mean", "tan")\n'
    assert name_lists(src, names) == [(2, "LIST")]


def test_no_table_of_op_names_outside_the_yaml():
    names = _op_names()
    found = []
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG).as_posix()
        if rel.startswith(NOT_SCANNED):
            continue
        source = path.read_text()
        for line, tab in side_tables(source, names):
            found.append(f"{rel}:{line}: {', '.join(tab[:6])}{' ...' if len(tab) > 6 else ''}")
        for line, table in name_lists(source, names):
            if (rel, table) not in _OTHER_VOCABULARIES:
                found.append(f"{rel}:{line}: {table}, a list of op names")
    assert not found, "op facts kept beside derivatives.yaml (make them keys of the op's entry):\n" + "\n".join(found)
