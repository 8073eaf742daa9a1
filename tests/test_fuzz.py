"""The differential fuzzer (tests/fuzz): a fixed-seed slice, and tests of the fuzzer itself."""

import contextlib
import io

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from pushforward.ops import generated as pf_ops  # noqa: E402

from fuzz.campaign import run_campaign  # noqa: E402
from fuzz.check import check  # noqa: E402
from fuzz.program import OP_BY_NAME, Program, Stmt, generate, source  # noqa: E402
from fuzz.shrink import reproducer, shrink  # noqa: E402
from fuzz.table import GROUPS, OPS  # noqa: E402

SLICE_SEED = 20261203
SLICE_PROGRAMS = 500


def test_fixed_seed_slice_has_no_pushforward_failure():
    # the core group only (the breadth ops have their own smaller slice below), so that the
    # slice's programs and CPU time stay what they were before the breadth ops came in
    rep = run_campaign(
        SLICE_SEED,
        n_programs=SLICE_PROGRAMS,
        shrink_budget=0,
        max_shrinks=1,
        exclude=tuple(op.name for op in OPS if op.group != "core"),
    )
    assert rep.programs >= 0.9 * SLICE_PROGRAMS
    bad = sorted(c.title() for c in rep.failures())
    assert not bad, f"{rep.failing_programs} of {rep.programs} programs fail in pushforward:\n" + "\n".join(bad)


def test_generation_is_deterministic_and_torch_runs_it():
    for s in range(5):
        a, b = generate(s), generate(s)
        assert a is not None and source(a) == source(b)
        assert 3 <= len(a.stmts) <= 12
        assert not [f for f in check(a) if f.verdict == "torch_rejects"]


def _scaled(fn, factor):
    def wrapped(*args):
        return fn(*args) * factor

    return wrapped


def _sin_program():
    # x0 -> v1 = x0.sin() -> v2 = v1 * x1, over float64 and complex128 inputs
    x = np.array([0.4, -1.1, 0.7])
    return Program(
        [x, x * 0.5 + 0.2j],
        [Stmt("sin", [0], {}, [2]), Stmt("mul", [2, 1], {}, [3])],
        tangents=[np.ones(3), np.full(3, 1 - 0.5j)],
        outputs=[2, 3],
        cotangents={2: np.ones(3), 3: np.full(3, 1 + 1j)},
    )


def test_a_wrong_jvp_formula_is_reported_as_a_pushforward_failure(monkeypatch):
    monkeypatch.setattr(pf_ops.SIN, "jvp", _scaled(pf_ops.SIN.jvp, 1.5))
    monkeypatch.setattr(pf_ops.SIN, "jvp_np", _scaled(pf_ops.SIN.jvp_np, 1.5))
    prog = _sin_program()
    fails = [f for f in check(prog) if f.verdict == "pf"]
    modes = {f.mode for f in fails}
    assert "jvp" in modes and "hvp:jvp" in modes, fails
    f = next(f for f in fails if f.mode == "jvp")
    assert f.what == "wrong"
    # finite differences side with torch: cos(0.4) = 0.921..., pushforward says 1.5 times that
    assert "0.921" in f.torch_val and "0.921" in f.fd_val and "1.381" in f.pf_val
    small, g = shrink(prog, f, budget=20)
    assert small.ops() == ["sin"]
    text = reproducer(small, g)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(text, "<repro>", "exec"), {})
    assert "1.381" in out.getvalue()  # the reproducer shows the wrong number


def test_a_wrong_backward_formula_is_reported_in_vjp_and_hvp(monkeypatch):
    def doubled(orig):
        def bad(grad, self, result, needs):
            (g,) = orig(grad, self, result, needs)
            return (None if g is None else g * 2.0,)

        return bad

    # both compiled forms: a plain vjp runs the array one, hvp the Tensor one (tangents ride along)
    monkeypatch.setattr(pf_ops.SIN, "backward", doubled(pf_ops.SIN.backward))
    monkeypatch.setattr(pf_ops.SIN, "backward_np", doubled(pf_ops.SIN.backward_np))
    fails = [f for f in check(_sin_program()) if f.verdict == "pf"]
    assert {"vjp", "hvp:vjp"} <= {f.mode for f in fails}, fails


def test_torch_forward_ad_aliasing_bug_is_a_torch_bug_not_ours():
    # y = x * 1; y.mul_(y): the exact tangent at x = 3, t = 1 is 6; torch gives 12
    prog = Program(
        [np.array(3.0)],
        [Stmt("mul_s", [0], {"s": 1.0}, [1]), Stmt("self_mul_", [1], {}, [])],
        tangents=[np.array(1.0)],
        outputs=[1],
        cotangents={1: np.array(1.0)},
    )
    fs = check(prog, modes=("jvp",))
    assert [f.verdict for f in fs] == ["torch"], fs
    assert float(fs[0].torch_val) == 12.0 and float(fs[0].pf_val) == 6.0
    assert float(fs[0].fd_val) == pytest.approx(6.0, rel=1e-6)


def test_a_pushforward_crash_where_torch_computes_is_a_failure(monkeypatch):
    def boom(*a):
        raise RuntimeError("deliberate")

    monkeypatch.setattr(pf_ops.SIN, "jvp", boom)
    monkeypatch.setattr(pf_ops.SIN, "jvp_np", boom)
    fs = [f for f in check(_sin_program(), modes=("jvp",)) if f.verdict == "pf"]
    assert fs and fs[0].what == "crash" and "deliberate" in fs[0].detail


def test_breadth_slice_has_no_pushforward_failure():
    # the breadth ops (linalg, fft, special, nn, sort, scatter, misc): a small fixed slice
    rep = run_campaign(
        SLICE_SEED + 1,
        n_programs=60,
        shrink_budget=0,
        max_shrinks=1,
        exclude=tuple(op.name for op in OPS if op.group == "core"),
    )
    assert rep.programs >= 50
    bad = sorted(c.title() for c in rep.failures())
    assert not bad, f"{rep.failing_programs} of {rep.programs} programs fail in pushforward:\n" + "\n".join(bad)


@pytest.mark.parametrize("group", GROUPS)
def test_every_table_op_renders_and_runs_in_torch(group):
    # each entry of the group appears in some generated program within a few hundred seeds
    # (with two core comparisons, so that masks exist for masked_select/masked_scatter)
    pool = [op for op in OPS if op.group == group or group != "core" and op.name in ("gt", "lt_s")]
    names = {op.name for op in OPS if op.group == group}
    seen = set()
    for s in range(400 if group == "core" else 150):
        p = generate(1000 + s, ops=pool)
        if p is not None:
            seen.update(p.ops())
    rare = names - seen
    assert len(rare) <= 0.1 * len(names), sorted(rare)


def test_the_write_and_scalar_entries_reach_the_eager_fast_paths(monkeypatch):
    """The entries for the eager fast paths draw what those paths take: a recorded write of a
    same-shape value or a number (bare._write_recorded), a region written into itself
    (bare._rewritten_in_place), a dual view with a Python or NumPy scalar (bare's arrays case
    with a scalar); and pushforward agrees with torch on them."""
    from pushforward.dispatch import bare

    hits = {"recorded": 0, "self": 0, "scalar": 0}

    def counting(name, key, f):
        def g(*a):
            r = f(*a)
            hits[key] += bool(r) if name != "run_arrays" else a[6]
            return r

        monkeypatch.setattr(bare, name, g)

    counting("_write_recorded", "recorded", bare._write_recorded)
    counting("_rewritten_in_place", "self", bare._rewritten_in_place)
    counting("run_arrays", "scalar", bare.run_arrays)
    pool = [OP_BY_NAME[n] for n in ("setitem_same", "setitem_aug", "setitem_self", "elem_scalar", "sin", "mul")]
    for s in range(30):
        prog = generate(5100 + s, ops=pool)
        if prog is not None:
            bad = [f for f in check(prog, modes=("jvp", "vjp")) if f.verdict == "pf"]
            assert not bad, (source(prog), bad)
    assert min(hits.values()) > 0, hits


# ---- the fuzzer's arbiters and generator rules --------------------------------------


def test_second_order_tangent_is_judged_by_the_primal_when_torch_s_jvp_is_slightly_off():
    """torch's cholesky_inverse jvp is off by ~1e-8 here (below the first-order tolerance), so the
    difference quotient of torch's jvp misses the second-order tangent by 1e-4: the primal's own
    second differences side with pushforward (a campaign blamed pushforward)."""
    x = np.array([[-0.8241042848667439, 1.1613504372831456], [0.823109893059967, 0.8242212612797986]])
    prog = Program(
        [x],
        [Stmt("tensordot", [0, 0], {}, [1]), Stmt("cholesky_inverse", [1], {}, [2])],
        tangents=[np.ones((2, 2))],
        outputs=[1, 2],
        cotangents={1: np.ones((2, 2)), 2: np.ones((2, 2))},
    )
    fs = [f for f in check(prog, modes=("jvp2",)) if f.mode == "jvp2"]
    assert fs and all(f.verdict == "torch" for f in fs), fs


def test_a_primal_that_amplifies_rounding_is_unresolved_not_a_failure():
    """rms_norm of log(cosine_similarity(v, v)): rounding noise normalised to size 1, which differs
    between any two correct libraries; a few-ulp change of the inputs moves torch's own result."""
    x = np.array([[0.9, -0.4, 0.3], [0.2, 1.1, -0.7]])
    prog = Program(
        [x],
        [Stmt("F.cosine_similarity", [0, 0], {}, [1]), Stmt("log", [1], {}, [2]), Stmt("F.rms_norm", [2], {}, [3])],
        tangents=[np.ones((2, 3))],
        outputs=[3],
        cotangents={},
    )
    from fuzz.check import _primal_verdict, run_torch

    out = run_torch(prog, "primal")[0]["out"][0]
    assert _primal_verdict(prog, 0, out * 0.5, out) == "unresolved"
    well = Program([x], [Stmt("sin", [0], {}, [1])], tangents=[np.ones((2, 3))], outputs=[1], cotangents={})
    assert _primal_verdict(well, 0, np.sin(x) * (1 + 1e-5), np.sin(x)) == "pf"


LAYOUT_POOL = [
    "lstsq",
    "lu_solve",
    "reshape",
    "flatten",
    "contiguous",
    "flatten_range",
    "transpose",
    "view_inplace",
    "mul_",
    "add_",
    "setitem",
    "sin_",
]


@pytest.mark.parametrize(
    "pool,seed,switch",
    [
        (LAYOUT_POOL, 4242016, "LAYOUT_ALIASING"),
        (LAYOUT_POOL, 4242037, "LAYOUT_ALIASING"),
        (["lstsq", "lu_solve", "transpose", "view_inplace"], 4243152, "LAYOUT_VIEWS"),
    ],
)
def test_layout_dependent_aliasing_is_left_out_of_programs(monkeypatch, pool, seed, switch):
    """torch's lstsq solution is a column-major slice of a larger buffer, ours a fresh row-major
    array: reshape/flatten/contiguous of it is a copy in one library and a view in the other,
    and `.T.view(-1)` works in torch only. The generator freezes such results (no write through any
    alias) and leaves such views out; without the rule these programs differ (by design)."""
    import fuzz.program as P

    ops = [OP_BY_NAME[n] for n in pool]
    prog = generate(seed, ops=ops)
    assert prog.layout_rules > 0
    assert not [f for f in check(prog) if f.verdict == "pf"]
    monkeypatch.setattr(P, switch, set() if switch == "LAYOUT_ALIASING" else False)
    assert [f for f in check(generate(seed, ops=ops), modes=("primal",)) if f.verdict == "pf"]


# ---- vector mode: batched tangents/cotangents and vmap against pushforward's own unbatched runs
# (vmap: a batched boolean mask selects a different number of elements per example, a shape vmap
# cannot batch; torch's vmap refuses it too, and pushforward says it does not support it)
@pytest.mark.parametrize(
    "modes,known", [(("vjvp", "vvjp", "vhvp"), ()), (("vmap",), ("getitem_mask",)), (("jet",), ())]
)
def test_fixed_seed_vector_slice_has_no_pushforward_failure(modes, known):
    rep = run_campaign(
        SLICE_SEED + 1,
        n_programs=250,
        shrink_budget=0,
        max_shrinks=1,
        modes=modes,
        exclude=tuple(op.name for op in OPS if op.group != "core") + known,
    )
    assert rep.programs >= 200
    bad = sorted(c.title() for c in rep.failures())
    assert not bad, f"{rep.failing_programs} of {rep.programs} programs fail in pushforward:\n" + "\n".join(bad)


def test_a_wrong_batching_rule_is_reported_in_vjvp_vvjp_and_vmap(monkeypatch):
    """A batched path that flips the sign (as a swapped batch dim would scramble rows) is caught
    in each vector mode against the unbatched runs, and the reproducer runs."""
    from pushforward.dispatch import batching

    orig_rule, orig_jvp = batching.PREPARE["elementwise"], pf_ops.SIN.jvp_np

    def bad_rule(op, ins, bat, args, B, names):  # mul: vmap of the program, batched cotangents
        plan = orig_rule(op, ins, bat, args, B, names)
        return plan if op.name != "mul" else (plan[0], plan[1], plan[2], lambda out: -out)

    def bad_jvp(self_p, self_t, result):  # sin's tangent array, batched ones only
        out = orig_jvp(self_p, self_t, result)
        return -out if np.ndim(self_t) > np.ndim(self_p) else out

    monkeypatch.setitem(batching.PREPARE, "elementwise", bad_rule)
    monkeypatch.setattr(pf_ops.SIN, "jvp_np", bad_jvp)
    prog = _sin_program()
    prog.seed = 3
    fails = [f for f in check(prog, modes=("vjvp", "vvjp", "vmap")) if f.verdict == "pf"]
    assert {f.mode for f in fails} == {"vjvp", "vvjp", "vmap"}, fails
    for f in fails:
        small, g = shrink(prog, f, budget=20)
        assert len(small.stmts) <= len(prog.stmts)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(reproducer(small, g), "<repro>", "exec"), {})
        assert out.getvalue().count("tensor") >= 2, out.getvalue()


def test_fixed_seed_slice_compiled_agrees_with_eager():
    # each program's primal, jvp, vjp, forward-over-reverse and vector-mode jvp through pf.compile
    # (fuzz/compiled.py), compared with eager pushforward to 1e-12
    rep = run_campaign(
        SLICE_SEED + 1,
        n_programs=40,
        shrink_budget=0,
        max_shrinks=1,
        exclude=tuple(op.name for op in OPS if op.group != "core"),
        modes=("compiled",),
    )
    assert rep.programs >= 36
    bad = sorted(c.title() for c in rep.failures())
    assert not bad, f"{rep.failing_programs} of {rep.programs} compiled programs disagree:\n" + "\n".join(bad)


def _leaving_the_domain_on_replay(which: str) -> Program:
    """A program whose compiled primal check replays it on inputs scaled by 1.1, where eager raises:
    mvlgamma's argument leaves its domain, or a matrix is no longer positive-definite."""
    if which == "mvlgamma":
        x = np.array(
            [
                [0.4320470503148487, 0.9250017773096237, 1.4602244004285363],
                [-1.393351098649597, 0.5585547046109127, -0.8359738192577493],
            ]
        )
        stmts = [Stmt("F.poisson_nll", [0, 0], {"red": "mean"}, [1]), Stmt("multigammaln", [1], {"p": 1}, [2])]
        return Program([x], stmts, tangents=[np.ones(x.shape)], outputs=[2], cotangents={2: np.array(1.0)})
    x = np.array([[0.9336471158478339, -1.4880754811726937], [0.7196596969320784, -0.7973102467944838]])
    stmts = [
        Stmt("pow_s", [0], {"e": -1}, [1]),
        Stmt("trunc", [1], {}, [2]),
        Stmt("fftshift", [2], {}, [3]),
        Stmt("cholesky", [3], {}, [4]),
    ]
    return Program([x], stmts, tangents=[np.ones(x.shape)], outputs=[4], cotangents={4: np.ones(x.shape)})


@pytest.mark.parametrize("which", ["mvlgamma", "cholesky"])
def test_compiled_raising_as_eager_does_on_the_replay_inputs_is_no_finding(which):
    # eager raises on the replay inputs, so compiled must raise the same error (the harness called
    # that a crash; and the compiled Cholesky raised NumPy's LinAlgError where eager names the op)
    from fuzz.compiled import check_compiled

    assert check_compiled(_leaving_the_domain_on_replay(which)) == []


@pytest.mark.parametrize("which", ["mvlgamma", "cholesky"])
def test_compiled_returning_values_where_eager_raises_is_a_finding(monkeypatch, which):
    import fuzz.compiled as fc

    def stale_compile(f):  # a "compiler" that returns its first result where eager raises
        first = []

        def c(*a):
            try:
                r = f(*a)
            except Exception:  # noqa: BLE001
                return first[0]
            first.append(r)
            return r

        c._cache = {}
        return c

    monkeypatch.setattr(fc.pf, "compile", stale_compile)
    found = fc.check_compiled(_leaving_the_domain_on_replay(which))
    assert any("eager raised" in f.detail and "no error" in f.detail for f in found), found


# ---- Taylor mode: jet to order 3 against pushforward's own nested dual levels (fuzz/jet.py)
def test_a_wrong_taylor_rule_is_reported_in_jet_mode(monkeypatch):
    from pushforward.ops.formulas import taylor as rules

    prog = _sin_program()
    assert not [f for f in check(prog, modes=("jet",)) if f.verdict == "pf"]

    right = rules.series_sincos

    def wrong(op, xs, args, K):
        good = right(op, xs, args, K)
        return {name: [c[0]] + [None if v is None else v * 1.5 for v in c[1:]] for name, c in good.items()}

    monkeypatch.setattr(rules, "series_sincos", wrong)
    fails = [f for f in check(prog, modes=("jet",)) if f.verdict == "pf"]
    assert fails and fails[0].mode == "jet" and fails[0].what == "wrong", fails
    small, g = shrink(prog, fails[0], budget=20)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(reproducer(small, g), "<repro>", "exec"), {})
    assert out.getvalue().count("tensor") >= 2, out.getvalue()


# ---- nested transforms: 2-3 transforms closing over outer variables (fuzz/transforms.py)
def test_fixed_seed_slice_of_nested_transforms_has_no_pushforward_failure():
    rep = run_campaign(
        SLICE_SEED + 2,
        n_programs=40,
        shrink_budget=0,
        max_shrinks=1,
        exclude=tuple(op.name for op in OPS if op.group != "core"),
        modes=("transforms",),
    )
    assert rep.programs >= 36
    bad = sorted(c.title() for c in rep.failures())
    assert not bad, f"{rep.failing_programs} of {rep.programs} nested programs fail:\n" + "\n".join(bad)


def test_perturbation_confusion_is_reported_by_the_transforms_mode(monkeypatch):
    # grad o grad where the inner function closes over the outer variable: an inner reverse level
    # that takes the outer level's leaf for its own drops the dependence (the bug this mode was made for)
    from fuzz import transforms as ft
    from pushforward.func import reverse_levels, transforms

    x = np.array([0.4, -1.1, 0.7])
    prog = Program([x, x * 0.5 + 0.2], [Stmt("mul", [0, 1], {}, [2])], tangents=[np.ones(3)] * 2, outputs=[2])
    prog.seed = 5
    nest = ft.Nest(prog, [ft.Level("grad", ["x0"], again="x0"), ft.Level("grad", ["x1"])])
    nest.base = {"x0": x, "x1": x * 0.5 + 0.2}
    assert ft._check_from(nest, 0) == []
    # (the old rule: a leaf any reverse transform made is private to every one of them)
    monkeypatch.setattr(transforms, "belongs_elsewhere", lambda leaf, uid: id(leaf) not in reverse_levels._OWNER)
    fails = [f for f in ft._check_from(nest, 0) if f.verdict == "pf"]
    assert fails and fails[0].what == "wrong" and "finite differences" in fails[0].detail, fails


def test_transforms_mode_runs_torch_through_the_oracle():
    # torch's derivative of ldexp by a negative integer exponent is 0 (finite differences give
    # 2 ** e): the oracle stands in for it in the transforms mode too, so there is nothing to report
    from fuzz import transforms as ft

    x = np.array([-1.2, 0.6])
    prog = Program([x], [Stmt("ldexp", [0], {"e": -2}, [1])], tangents=[np.ones(2)], outputs=[1])
    prog.seed = 7
    nest = ft.Nest(prog, [ft.Level("jacfwd", ["x0"])])
    nest.base = {"x0": x}
    assert ft._check_from(nest, 0) == []
    assert ft.TORCH.ops.ldexp is not ft.torch.ldexp


def test_torch_kron_gradient_after_an_in_place_write_is_a_labelled_torch_bug():
    # v1 = x.square(); v2 = kron(v1, x); v1.neg_(): torch's kron reads v1 through views its version
    # counter does not track, so its gradient silently uses -x**2; finite differences side with ours
    from fuzz.campaign import FailureClass, label

    x = np.array([-0.6, -0.4])
    prog = Program(
        [x],
        [Stmt("square", [0], {}, [1]), Stmt("kron", [1, 0], {}, [2]), Stmt("neg_", [1], {}, [])],
        tangents=[np.ones(2)],
        outputs=[2],
        cotangents={2: np.ones(4)},
    )
    fs = [f for f in check(prog, modes=("vjp",)) if f.mode == "vjp"]
    assert [f.verdict for f in fs] == ["torch"], fs
    assert fs[0].pf_val == "[1.72, 1.32]" and fs[0].torch_val == "[0.68, 0.28]"
    cls = FailureClass(fs[0].key(), "torch", frozenset(prog.ops()))
    assert label(cls).startswith("torch bug: kron's backward")


def test_a_gradient_tangent_torch_refuses_through_detach_is_checked_by_double_backward():
    # torch refuses (a saved value written in place) and detach pins a value that finite differences
    # of the gradient would move: forward-over-reverse is checked against reverse-over-reverse
    # (written out, not drawn from a seed: a widened generator draws other programs)
    prog = Program(
        [np.array([0.3, -0.5, 0.8])],
        [
            Stmt("exp", [0], {}, [1]),
            Stmt("detach", [0], {}, [2]),
            Stmt("mul", [1, 2], {}, [3]),
            Stmt("exp_", [1], {}, []),
        ],
        tangents=[np.array([1.0, 0.5, -0.2])],
        outputs=[1, 3],
        cotangents={1: np.array([0.7, -0.1, 0.4]), 3: np.array([1.0, 0.2, -0.6])},
    )
    fs = [f for f in check(prog, modes=("vjp", "hvp")) if f.what == "saved-modified"]
    assert sorted((f.mode, f.verdict) for f in fs) == [("hvp", "checked"), ("vjp", "checked")], fs


def test_a_zero_cotangent_at_sqrt_of_zero_is_checked_against_finite_differences():
    """sqrt(x * 0) * 0: torch's gradient and tangent are nan (0 * inf), pushforward's 0 (docs/design.md,
    "Zero cotangents at singular points"); finite differences decide for us."""
    prog = Program(
        [np.array([-0.5, 1.2])],
        [Stmt("mul_s", [0], {"s": 0.0}, [1]), Stmt("sqrt", [1], {}, [2]), Stmt("mul_s", [2], {"s": 0.0}, [3])],
        tangents=[np.ones(2)],
        outputs=[3],
        cotangents={3: np.ones(2)},
    )
    fs = check(prog, modes=("jvp", "vjp"))
    assert sorted(f.verdict for f in fs) == ["torch", "torch"], fs
    assert all("nan" in f.torch_val and "nan" not in f.pf_val for f in fs)
