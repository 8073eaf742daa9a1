"""The kernels and the generated ops reach the array library only through backend.py.

So a later array-API backend (CuPy, Dask) changes one module, not the YAML nor the kernels:
- the YAML's `kernel:` fields name `xp.` (the array namespace), `sp.` (special functions) or
  `K.` (kernels.py), never NumPy directly;
- the generated module does not import or mention NumPy/SciPy, and the emitter writes `xp.`
  when it compiles a formula to arrays;
- kernels*.py import the array library only from backend.py;
- the indirection is free: a record's kernel is the library's own function, no wrapper.
Checked by reading the source with `ast`.
"""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("yaml")

import pushforward  # noqa: E402
from pushforward.core import backend as backend  # noqa: E402
from pushforward.kernels import basic as K  # noqa: E402
from pushforward.ops import generated as G  # noqa: E402
from pushforward.codegen.emit import emit  # noqa: E402
from pushforward.codegen.load import SpecError, helper_names, load  # noqa: E402

PKG = Path(pushforward.__file__).resolve().parent
ARRAY_LIBS = ("numpy", "scipy")
KERNEL_NAMES = {"xp", "sp", "K"}  # what a `kernel:` field may start from
# kernels*.py modules allowed to import the array library directly, each with the reason why.
# Empty: everything they need (NumPy extensions included) comes through backend.py.
ALLOWED_DIRECT = {}


def _imports_of(tree: ast.AST) -> list[str]:
    """Every module name imported anywhere in a parsed file."""
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            out += [a.name for a in n.names]
        elif isinstance(n, ast.ImportFrom) and n.level == 0:
            out.append(n.module or "")
    return out


def _array_lib_imports(path: Path) -> list[str]:
    return [m for m in _imports_of(ast.parse(path.read_text())) if m.split(".")[0] in ARRAY_LIBS]


def _names(tree: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


def test_yaml_kernel_fields_name_the_backend():
    bad = []
    for e in load():
        if e.kernel is not None:
            names = _names(ast.parse(e.kernel, mode="eval"))
            if not names <= KERNEL_NAMES:
                bad.append((e.name, e.kernel))
    assert not bad, f"kernel: fields must start from {sorted(KERNEL_NAMES)} (backend.py, kernels.py): {bad}"


def test_generated_module_does_not_use_numpy_directly():
    path = Path(G.__file__)
    text = path.read_text()
    assert not _array_lib_imports(path), "the generated module must import the array library from backend.py"
    assert "np" not in _names(ast.parse(text))
    assert not re.search(r"\bnp\.", text)
    assert G.xp is backend.xp and G.sp is backend.sp


@pytest.mark.parametrize("path", sorted(PKG.glob("kernels*.py")), ids=lambda p: p.name)
def test_kernels_import_the_array_library_only_via_backend(path):
    direct = _array_lib_imports(path)
    if path.name in ALLOWED_DIRECT:
        return
    assert not direct, f"{path.name} imports {direct}: import xp/sp/sla from pushforward.core.backend instead"
    assert "np" not in _names(ast.parse(path.read_text())), f"{path.name} uses a name `np`: use `xp`"


def test_allow_list_stays_true():
    names = {p.name for p in PKG.glob("kernels*.py")}
    for name in ALLOWED_DIRECT:
        assert name in names and _array_lib_imports(PKG / name), f"{name} no longer needs its exception"


def test_kernels_share_the_backend_namespace():
    assert K.xp is backend.xp and K.sp is backend.sp


def test_records_call_the_library_function_itself():
    """`kernel: xp.sin` puts the library's own function in the record: no wrapper on the hot path."""
    checked = 0
    by_name = {r.name: r for r in G.RECORDS}
    for e in load():
        k = e.kernel
        # (an op whose Tensor parameters do not come first calls its kernel through an adapter
        # that reorders the arguments: _einsum_pair's equation)
        if k is not None and re.fullmatch(r"(xp|sp)\.\w+", k) and e.name in by_name and e.params[0].is_tensor:
            lib, fn = k.split(".")
            rec = by_name[e.name]
            if rec.batch == "elementwise" and len(rec.kinds) > 1:
                # an element-wise op of several tensors: an adapter lays the result out as torch's
                # (K.elementwise_layout) around the library function
                assert fn in rec.kernel.__code__.co_names and "elementwise_layout" in rec.kernel.__code__.co_names
            else:
                assert rec.kernel is getattr(getattr(backend, lib), fn), (e.name, k)
            checked += 1
    assert checked >= 50  # the element-wise ops: sin, exp, multiply, erf, ...


SPEC = """
- name: myop(Tensor self) -> Tensor
  kernel: xp.sin
  self: grad * zeros_like(self)
  result: self_t * zeros_like(self_p)
"""


def test_emitter_writes_xp_for_array_formulas(tmp_path):
    """A creation function in a formula compiled to arrays becomes `xp.<fn>`, not `np.<fn>`."""
    p = tmp_path / "derivatives.yaml"
    p.write_text(textwrap.dedent(SPEC))
    src = emit(load(p), helper_names())
    compile(src, "ops.py", "exec")
    jvp_np = [line for line in src.splitlines() if line.startswith("def _myop__jvp_np")]
    assert jvp_np and "xp.zeros_like(" in jvp_np[0], jvp_np
    assert not re.search(r"\bnp\.", src)


def test_formula_naming_numpy_is_rejected(tmp_path):
    """Formulas may use `xp` (the backend namespace), not `np`, which the generated module lacks."""
    p = tmp_path / "derivatives.yaml"
    p.write_text(textwrap.dedent(SPEC).replace("zeros_like(self)", "zeros_like(self) * np.pi"))
    with pytest.raises(SpecError, match="np"):
        load(p)
