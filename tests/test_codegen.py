"""The code generator: the committed module is what the YAML generates, and the loader
rejects malformed entries with a message that names the entry."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("yaml")

import pushforward  # noqa: E402
from pushforward.codegen.__main__ import OUT, generate  # noqa: E402
from pushforward.codegen.emit import emit  # noqa: E402
from pushforward.codegen.load import OpEntry, SpecError, helper_names, load  # noqa: E402

PKG = Path(pushforward.__file__).resolve().parent


# ----------------------------------------------------------------------------- regeneration


def test_committed_module_is_what_the_yaml_generates():
    text = generate()
    committed = OUT.read_text()
    if text != committed:
        import difflib

        diff = "".join(
            list(difflib.unified_diff(committed.splitlines(True), text.splitlines(True), "committed", "regenerated"))[
                :60
            ]
        )
        pytest.fail("src/pushforward/ops/generated.py is stale: run `python -m pushforward.codegen`\n" + diff)


def _run(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(PKG.parent), PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run(
        [sys.executable, *args], env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )


def test_codegen_check_command():
    r = _run("-m", "pushforward.codegen", "--check")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "up to date" in r.stdout


def test_codegen_runs_by_path_without_importing_the_package():
    # the way to recover when the generated module itself is broken
    r = _run(str(PKG / "codegen"), "--check")
    assert r.returncode == 0, r.stdout + r.stderr


def test_generation_is_deterministic_and_compiles():
    entries = load()
    a = emit(entries, helper_names())
    b = emit(load(), helper_names())
    assert a == b
    compile(a, "ops.py", "exec")
    assert all(isinstance(e, OpEntry) for e in entries)
    with pytest.raises(Exception):  # frozen dataclasses
        entries[0].name = "other"  # type: ignore[misc]


def test_every_yaml_op_is_generated():
    from pushforward.ops import generated as ops
    from pushforward.dispatch.oprecord import Op

    records = {v.name for v in vars(ops).values() if isinstance(v, Op)}
    for e in load():
        if e.composite is None:
            assert e.name in records, e.name
        if e.function and not e.name.startswith("_") and e.namespace:  # e.g. pushforward.nn.functional.<name>
            import importlib

            space = importlib.import_module(f"pushforward.{e.namespace}")
            assert e.name in ops.NAMESPACES[e.namespace] and hasattr(space, e.name), e.name
            assert e.name not in ops.FUNCTIONS, e.name
        elif e.function and not e.name.startswith("_"):
            assert e.name in ops.FUNCTIONS and hasattr(pushforward, e.name), e.name
            for a in e.plain_aliases:
                assert ops.FUNCTIONS[a] is ops.FUNCTIONS[e.name]
        for ns, short in e.namespace_aliases:
            assert ops.NAMESPACES[ns][short] is getattr(ops, e.name), (e.name, ns, short)
        if e.method:
            assert e.name in ops.METHODS, e.name


def test_forward_kinds_in_records_match_the_yaml():
    from pushforward.ops import generated as ops
    from pushforward.dispatch.oprecord import Op

    records = {v.name: v for v in vars(ops).values() if isinstance(v, Op)}
    for e in load():
        if e.composite is not None or not e.differentiable or len(e.forward) != 1:
            continue
        ((key, f),) = e.forward
        rec = records[e.name]
        want = f if f in ("auto_element_wise", "auto_linear") else ("explicit" if f != "zero" else None)
        if want is not None:
            assert rec.jvp_kind == want, (e.name, rec.jvp_kind, f)


# ----------------------------------------------------------------------------- validation

GOOD = """
- name: mysin(Tensor self) -> Tensor
  kernel: xp.sin
  self: grad * self.cos().conj()
  result: auto_element_wise
"""


def _write(tmp_path: Path, body: str, good_first: bool = True) -> Path:
    p = tmp_path / "derivatives.yaml"
    p.write_text((textwrap.dedent(GOOD) if good_first else "") + textwrap.dedent(body))
    return p


def _error(tmp_path: Path, body: str) -> str:
    with pytest.raises(SpecError) as ei:
        load(_write(tmp_path, body))
    msg = str(ei.value)
    return msg


def test_good_file_loads(tmp_path):
    entries = load(_write(tmp_path, ""))
    assert [e.name for e in entries] == ["mysin"]
    assert entries[0].forward == (("result", "auto_element_wise"),)
    assert entries[0].backward == (("self", "grad * self.cos().conj()"),)
    compile(emit(entries, helper_names()), "ops.py", "exec")


def test_unknown_name_in_backward_formula(tmp_path):
    msg = _error(
        tmp_path,
        """
        - name: bad_bw(Tensor self) -> Tensor
          kernel: xp.sin
          self: grad * undefined_helper(self)
          result: auto_element_wise
        """,
    )
    assert "bad_bw" in msg and "undefined_helper" in msg and "backward" in msg
    lines = (tmp_path / "derivatives.yaml").read_text().splitlines()
    lineno = next(i for i, ln in enumerate(lines, 1) if "bad_bw" in ln)
    assert f"line {lineno}," in msg  # the entry's line in the file


def test_unknown_name_in_forward_formula(tmp_path):
    msg = _error(
        tmp_path,
        """
        - name: bad_fw(Tensor self, Tensor other) -> Tensor
          kernel: xp.multiply
          self: grad * other
          other: grad * self
          result: other_p * self_t + self_p * another_t
        """,
    )
    assert "bad_fw" in msg and "another_t" in msg and "forward" in msg


def test_missing_backward_formula_for_differentiable_input(tmp_path):
    msg = _error(
        tmp_path,
        """
        - name: half_done(Tensor self, Tensor other) -> Tensor
          kernel: xp.multiply
          self: grad * other.conj()
          result: other_p * self_t + self_p * other_t
        """,
    )
    assert "half_done" in msg and "missing backward formula" in msg and "'other'" in msg


def test_non_differentiable_input_needs_no_formula(tmp_path):
    entries = load(
        _write(
            tmp_path,
            """
        - name: scaled(Tensor self, Tensor other) -> Tensor
          kernel: xp.multiply
          non_differentiable: [other]
          self: grad * other.conj()
          result: self_t * other
        """,
        )
    )
    assert entries[-1].non_differentiable == ("other",)


@pytest.mark.parametrize(
    "sig, what",
    [
        ("bad_sig(Tensor self -> Tensor", "bad signature"),
        ("bad_sig(Tensr self) -> Tensor", "unknown type"),
        ("bad_sig(Tensor) -> Tensor", "bad parameter"),
        ("bad_sig(Tensor self) -> Tensr", "bad return"),
        ("bad_sig(Tensor self, Tensor self) -> Tensor", "duplicate"),
        ("bad_sig(Tensor grad) -> Tensor", "reserved"),
    ],
)
def test_bad_signature(tmp_path, sig, what):
    msg = _error(
        tmp_path,
        f"""
        - name: {sig}
          kernel: xp.sin
          self: grad
          result: auto_linear
        """,
    )
    assert "bad_sig" in msg and what in msg


def test_auto_element_wise_on_a_two_input_op(tmp_path):
    msg = _error(
        tmp_path,
        """
        - name: two_in(Tensor self, Tensor other) -> Tensor
          kernel: xp.multiply
          self: grad * other.conj()
          other: grad * self.conj()
          result: auto_element_wise
        """,
    )
    assert "two_in" in msg and "auto_element_wise" in msg and "one differentiable" in msg


def test_bare_input_name_in_forward_formula(tmp_path):
    msg = _error(
        tmp_path,
        """
        - name: bare(Tensor self) -> Tensor
          kernel: xp.sin
          self: grad * self.cos().conj()
          result: self_t * self.cos()
        """,
    )
    assert "bare" in msg and "'self'" in msg and "self_p" in msg


def test_formula_that_is_not_python(tmp_path):
    msg = _error(
        tmp_path,
        """
        - name: syntax(Tensor self) -> Tensor
          kernel: xp.sin
          self: grad * (self.cos(
          result: auto_element_wise
        """,
    )
    assert "syntax" in msg and "not a Python expression" in msg


def test_duplicate_op_and_unknown_key_and_kernel_rules(tmp_path):
    msg = _error(tmp_path, GOOD)
    assert "mysin" in msg and "declared twice" in msg
    msg = _error(
        tmp_path,
        """
        - name: typo(Tensor self) -> Tensor
          kernel: xp.sin
          slef: grad
          result: auto_linear
        """,
    )
    assert "typo" in msg and "unknown key 'slef'" in msg
    msg = _error(
        tmp_path,
        """
        - name: nokernel(Tensor self) -> Tensor
          self: grad
          result: auto_linear
        """,
    )
    assert "nokernel" in msg and "kernel" in msg
    msg = _error(
        tmp_path,
        """
        - name: comp(Tensor self) -> Tensor
          composite: self.sin()
          self: grad
        """,
    )
    assert "comp" in msg and "composite" in msg


def test_codegen_command_reports_spec_errors(tmp_path, monkeypatch, capsys):
    from pushforward.codegen import __main__ as cg
    from pushforward.codegen import load as loadmod

    bad = _write(
        tmp_path,
        """
        - name: broken(Tensor self) -> Tensor
          kernel: xp.sin
          result: auto_element_wise
        """,
    )
    real_load = loadmod.load
    monkeypatch.setattr(cg, "load", lambda: real_load(bad))
    out = tmp_path / "ops.py"
    monkeypatch.setattr(cg, "OUT", out)
    assert cg.main([]) == 2
    assert cg.main(["--check"]) == 2
    assert not out.exists()
    err = capsys.readouterr().err
    assert "broken" in err and "missing backward formula" in err


# -- formulas are placed as syntax trees -------------------------------------------------------


class _Untouchable:
    """Stands for a saved tensor or grad: any use but its dtype is an error."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.dtype = __import__("numpy").dtype("float64")

    def __getattr__(self, name):
        raise AssertionError(f"the backward used {self.what}.{name} although no input needs grad")

    def _fail(self, *a, **k):
        raise AssertionError(f"the backward computed with {self.what} although no input needs grad")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _fail
    __neg__ = __pow__ = __rpow__ = __matmul__ = __rmatmul__ = __getitem__ = _fail


def test_a_conditional_formula_keeps_its_needs_guard():
    """div's formulas are conditionals; pasted as text before `if needs[i] else None` they
    swallowed the guard and computed other's gradient when only self needed one."""
    from pushforward.ops import generated as ops
    import pushforward as pf

    grad, other = pf.tensor([1.0, 2.0]), pf.tensor([4.0, 8.0])
    # self's value is not kept when only self needs grad: had other's formula run, it would fail on None
    g_self, g_other = ops._div__backward(grad, None, other, None, None, [True, False])
    assert g_other is None and g_self.tolist() == [0.25, 0.25]
    g_self, g_other = ops._div__backward(grad, None, other, None, "floor", [True, False])
    assert g_other is None and g_self.tolist() == [0.0, 0.0]


def test_no_formula_runs_for_inputs_that_need_no_grad():
    """Every generated backward, called with no input needing grad, returns only Nones and
    touches none of its inputs."""
    from pushforward.ops import generated as ops

    checked = 0
    for e in load():
        if e.composite is not None or not e.differentiable:
            continue
        fn = getattr(ops, f"_{e.name}__backward")
        res = ["result"] if len(e.returns) == 1 else [f"result{i}" for i in range(len(e.returns))]
        tensors = [_Untouchable(p.name) for p in e.tensor_params]
        args = [None] * len(e.arg_params)
        out = fn(_Untouchable("grad"), *tensors, *[_Untouchable(r) for r in res], *args, [False] * len(e.diff_params))
        assert out == (None,) * len(e.diff_params), e.name
        checked += 1
    assert checked > 100


def test_emitted_code_parses_back_to_the_tree_it_was_built_from():
    import ast
    from pushforward.codegen.emit import _block

    tree = ast.Return(
        ast.Tuple(
            [ast.IfExp(ast.Name("c", ast.Load()), ast.parse("a if b else d", mode="eval").body, ast.Constant(None))],
            ast.Load(),
        )
    )
    lines = _block("    ", tree)
    assert lines == ["    return ((a if b else d) if c else None,)"]  # fits on one line
    assert ast.dump(ast.parse(textwrap.dedent("\n".join(lines)))) == ast.dump(ast.parse(ast.unparse(tree)))
    long = ast.Return(ast.Tuple([tree.value.elts[0], ast.Name("x" * 100, ast.Load())], ast.Load()))
    lines = _block("    ", long)  # too long: one item per line
    assert lines == ["    return (", "        (a if b else d) if c else None,", "        " + "x" * 100 + ",", "    )"]
    assert ast.dump(ast.parse(textwrap.dedent("\n".join(lines)))) == ast.dump(ast.parse(ast.unparse(long)))


def test_static_tests_of_conditional_formulas_decide_what_is_kept(tmp_path):
    """A conditional whose test reads only arguments and metadata is evaluated when the node is
    recorded: the generated `_<op>__save` picks the table of the branch that will run."""
    src = emit(
        load(
            _write(
                tmp_path,
                """
        - name: pick(Tensor self, Tensor other, *, str? mode=None) -> Tensor
          kernel: xp.multiply
          self: grad * other if mode is None else grad * self.shape[0]
          other: grad * self
          result: other_p * self_t + self_p * other_t
        """,
            )
        ),
        helper_names(),
    )
    import ast

    fn = next(n for n in ast.parse(src).body if isinstance(n, ast.FunctionDef) and n.name == "_pick__save")
    ns = {}
    exec(compile(ast.Module([fn], []), "ops.py", "exec"), ns)
    save = ns["_pick__save"]
    assert save(None, None, None)[1] == ((0, 2), None)  # self needs grad, mode None: keep other
    assert save(None, None, "x")[1] == ((1, 0), None)  # the other branch reads self's shape only
    assert save(None, None, "x")[3] == ((2, 0), None)  # other's gradient reads self


def test_docstrings_and_defaults_are_emitted_safely(tmp_path):
    src = emit(
        load(
            _write(
                tmp_path,
                '''
        - name: quoted(Tensor self, float scale=2 * 0.5) -> Tensor
          kernel: xp.negative
          doc: 'ends in a quote """ and has a backslash \\\\ "'
          self: -grad
          result: auto_linear
        ''',
            )
        ),
        helper_names(),
    )
    import ast

    fn = next(n for n in ast.parse(src).body if isinstance(n, ast.FunctionDef) and n.name == "quoted")
    assert ast.get_docstring(fn) == 'ends in a quote """ and has a backslash \\\\ "'
    assert ast.unparse(fn.args.defaults[0]) == "2 * 0.5"


# ----------------------------------------------------------------------------- conj()


@pytest.mark.parametrize(
    "formula, helper, expected",
    [
        # conj of an auto_element_wise tangent cancels for a holomorphic op
        ("(self_t.conj() * result.conj()).conj()", True, "self_t * result"),
        ("(self_t.conj() / (self_p * 0.5).conj()).conj()", True, "self_t / (self_p * 0.5)"),
        ("(-self_t.conj() * self_p.cos().conj()).conj()", True, "-self_t * self_p.cos()"),
        # a conj left on a tensor skips the op for real ones at run time
        ("(self_t.conj() * self_p.sgn()).conj()", True, "self_t * _conj(self_p.sgn())"),
        ("grad * (result + 1).conj()", True, "grad * (_conj(result) + 1)"),
        ("grad * (result * result).conj()", False, "grad * (result * result).conj()"),
        # not moved onto what may be a Python number (a float has no .conj()), nor through a complex constant
        ("(grad * alpha).conj()", True, "_conj(grad * alpha)"),
        ("(grad * 1j).conj()", True, "_conj(grad * 1j)"),
        ("(alpha * beta).conj()", True, "(alpha * beta).conj()"),
    ],
)
def test_conj_is_moved_inwards_where_it_cancels(formula, helper, expected):
    import ast
    from pushforward.codegen.emit import _simplify_conj

    tensors = {"grad", "self_t", "self_p", "result"}
    out = _simplify_conj(ast.parse(formula, mode="eval").body, tensors, helper)
    assert ast.unparse(out) == expected


def test_no_real_only_copies_of_formulas():
    text = OUT.read_text()
    assert 'dtype.kind != "c"' not in text
    assert "def _exp__jvp(self_p, self_t, result): return self_t * result" in text


def test_dotted_aliases_name_the_op_in_a_sub_namespace(tmp_path):
    """`aliases: [linalg.solve]`: the op is pf.linalg.solve (the namespace module takes its names
    from NAMESPACES), and nothing of that name appears at the top level."""
    import pushforward as pf
    from pushforward.ops import generated as ops

    assert ops.NAMESPACES["linalg"]["solve"] is ops.linalg_solve is pf.linalg.solve
    assert ops.NAMESPACES["special"]["expit"] is pf.sigmoid is pf.special.expit
    assert ops.NAMESPACES["fft"]["fft"] is pf.fft.fft
    assert "solve" not in ops.FUNCTIONS and not hasattr(ops, "solve")
    assert set(ops.NAMESPACES["linalg"]) <= set(pf.linalg.__all__)
    p = tmp_path / "d.yaml"
    p.write_text(
        "- name: s(Tensor self) -> Tensor\n  kernel: xp.sin\n  aliases: [linalg.9s]\n  differentiable: false\n"
    )
    with pytest.raises(SpecError, match="alias 'linalg.9s' is not a name or a dotted namespace.name"):
        load(p)
