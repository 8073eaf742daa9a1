"""Random straight-line programs: generation (checked step by step in torch) and source text.

A program is a list of statements over variables: inputs ``x0, x1, ...`` (float64 or
complex128, differentiated) and results ``v3, v4, ...``. Its source is one function
``body(L, x0, ...)`` over a module ``L`` (pushforward or torch: the op names are the same)
and ``np`` (a NumPy scalar operand, ``np.float64(1.5) * x``) returning the final value of every
variable the statements made. The generator executes
each candidate statement in torch on concrete values, so it knows shapes and dtypes, can
reject samples outside an op's domain (kinks, cuts, ties) or that torch refuses, and only
keeps programs torch runs.
"""

from __future__ import annotations

import random
import re
import warnings
from dataclasses import dataclass, field

import numpy as np
import torch

from .table import OPS, Op

torch.set_num_threads(1)  # tiny tensors: threads only add latency

OP_BY_NAME = {op.name: op for op in OPS}
# Ops whose torch result is a view where pushforward's is fresh memory, by design: conj (and mH)
# follow NumPy (np.conj copies; torch has a lazy conjugate bit), and einsum returns fresh memory
# (torch returns a view for pure permutations, which its docs do not promise).
ALIAS_DIFFERS = {"conj", "mH", "H", "einsum"}
# ... and detach: a write through a detached alias changes values behind autodiff's back (by design
# in both libraries), so no derivative is defined for finite differences to arbitrate.
FROZEN_RESULTS = ALIAS_DIFFERS | {"detach"}
# Ops documented to return a view or a copy by the input's memory layout (torch: "reshape may
# return a view or a copy"; contiguous returns self when already contiguous). pushforward lays out
# results as torch does (docs/design.md, "Memory layout") except a few linear-algebra results
# (lstsq's solution, lu_factor's LU: docs/design.md, "Deviations"), so the same reshape of those
# can be a view in one library and a copy in the other. The generator runs each of these statements in
# pushforward too; where the two results alias their inputs differently, the result and its
# inputs are frozen (no later in-place write through any alias): the derivatives of either layout
# are right, only which values a write would change differs (a documented layout choice).
LAYOUT_ALIASING = {"reshape", "flatten", "flatten_range", "contiguous", "unflatten"}
LAYOUT_VIEWS = True  # the rule below (a switch for the fuzzer's own tests)
# Likewise `.view(...)` of a value whose torch layout is column-major (a transpose of inv(x) is
# contiguous in torch, not in pushforward): a view that only torch's layout allows is left out of
# the program. A value has torch's kernel layout when torch returned it non-contiguous from a
# non-view op (LAPACK's column-major results), or was derived from such a value; pushforward's
# own contiguity bugs (non-contiguous where torch's result is contiguous) are still reported.
_PLACEHOLDER = re.compile(r"\{(\d+)\}")
MAX_ABS = 1e3


@dataclass
class Meta:
    shape: tuple
    kind: str  # "f" float64, "c" complex128, "i" int64, "b" bool
    no_inplace: bool = False  # a view torch forbids writing (output of a multi-view op)


@dataclass
class Stmt:
    op: str
    args: list
    params: dict
    outs: list  # variable ids this statement creates (empty for in-place statements)


@dataclass
class Program:
    inputs: list  # numpy arrays (float64 / complex128)
    stmts: list
    tangents: list = field(default_factory=list)  # one per input
    outputs: list = field(default_factory=list)  # variable ids returned by body
    cotangents: dict = field(default_factory=dict)  # var id -> numpy array (float/complex outputs)
    seed: int | None = None
    layout_rules: int = 0  # statements the generator's layout rules froze or left out

    @property
    def n_inputs(self) -> int:
        return len(self.inputs)

    def ops(self) -> list:
        return [s.op for s in self.stmts]


def var_name(prog_or_n, i: int) -> str:
    n = prog_or_n if isinstance(prog_or_n, int) else prog_or_n.n_inputs
    return f"x{i}" if i < n else f"v{i}"


def render_stmt(st: Stmt, n_inputs: int) -> str:
    op = OP_BY_NAME[st.op]
    names = [var_name(n_inputs, a) for a in st.args]
    params = {
        k: _PLACEHOLDER.sub(lambda m: names[int(m.group(1))], v) if isinstance(v, str) else v
        for k, v in st.params.items()
    }
    code = op.render.format(*names, **params)
    if op.statement:
        return code
    if not st.outs:
        return f"_ = {code}"
    lhs = ", ".join(var_name(n_inputs, o) for o in st.outs)
    return f"{lhs}{',' if len(st.outs) == 1 and op_multi(st) else ''} = {code}"


def op_multi(st: Stmt) -> bool:
    return "multi" in OP_BY_NAME[st.op].tags or st.params.get("_multi", False)


def body_lines(prog: Program) -> list:
    return [render_stmt(s, prog.n_inputs) for s in prog.stmts]


def source(prog: Program) -> str:
    args = ", ".join(var_name(prog, i) for i in range(prog.n_inputs))
    lines = [f"def body(L, {args}):"]
    lines += ["    " + ln for ln in body_lines(prog)]
    lines.append("    return [" + ", ".join(var_name(prog, o) for o in prog.outputs) + "]")
    return "\n".join(lines)


_CACHE: dict = {}


def compile_body(prog: Program):
    key = (id(prog), len(prog.stmts), tuple(prog.outputs))
    cached = getattr(prog, "_compiled", None)
    if cached is not None and cached[0] == key:
        return cached[1]
    src = source(prog)
    fn = _CACHE.get(src)
    if fn is None:
        ns: dict = {"np": np}  # (a NumPy scalar operand: np.float64(1.5) * x)
        exec(compile(src, "<fuzz-program>", "exec"), ns)
        fn = ns["body"]
        if len(_CACHE) > 2000:
            _CACHE.clear()
        _CACHE[src] = fn
    prog._compiled = (key, fn)
    return fn


# ------------------------------------------------------------------ generation context


def _kind(t: torch.Tensor) -> str:
    if t.is_complex():
        return "c"
    if t.is_floating_point():
        return "f"
    return "b" if t.dtype == torch.bool else "i"


def _broadcastable(a: tuple, b: tuple) -> bool:
    for x, y in zip(reversed(a), reversed(b)):
        if x != y and x != 1 and y != 1:
            return False
    return True


def _broadcasts_into(src: tuple, dst: tuple) -> bool:
    if len(src) > len(dst):
        return False
    return all(x == y or x == 1 for x, y in zip(reversed(src), reversed(dst)))


class Ctx:
    """What an op's gen() sees: the variables (metas and torch values) and the random source."""

    def __init__(self, rng: random.Random, n_inputs: int):
        self.rng = rng
        self.n_inputs = n_inputs
        self.metas: list = []
        self.values: list = []
        self.torch_layout: set = set()  # variable ids with torch's kernel (column-major) layout
        # Results (variable ids) of FROZEN_RESULTS ops: no in-place statement writes into their
        # memory (through any alias), since documented aliasing, not derivatives, would differ.
        self.frozen: set = set()

    def meta(self, i: int) -> Meta:
        return self.metas[i]

    def value(self, i: int) -> torch.Tensor:
        return self.values[i]

    def items(self):
        return list(enumerate(self.metas))

    def _writable(self, i: int) -> bool:
        if i < self.n_inputs or self.metas[i].no_inplace:
            return False
        t = self.values[i]
        base = t._base if t._base is not None else t
        if self.frozen:
            ptr = t.untyped_storage().data_ptr()  # any alias: views, detach(), ...
            if any(self.values[f].untyped_storage().data_ptr() == ptr for f in self.frozen):
                return False
        if any(base is self.values[k] for k in range(self.n_inputs)):
            return False
        return not any(s == 0 and n > 1 for s, n in zip(t.stride(), t.shape))

    def pick(self, kinds: str, inplace: bool = False, pred=None):
        cands = [
            i
            for i, m in enumerate(self.metas)
            if m.kind in kinds and (pred is None or pred(m)) and (not inplace or self._writable(i))
        ]
        if not cands:
            return None
        # favour recent variables, so programs are chains rather than fans of the inputs
        w = [1.0 + 2.0 * (i + 1) / len(self.metas) for i in cands]
        return self.rng.choices(cands, w)[0]

    def choose(self, pred):
        cands = [i for i, m in enumerate(self.metas) if pred(m)]
        return self.rng.choice(cands) if cands else None

    def partner(self, i: int, kinds: str, into: bool = False):
        sh = self.metas[i].shape
        if into and self.metas[i].kind == "f":
            kinds = kinds.replace("c", "")
        if into:
            return self.partner_shape(sh, kinds, target=i)
        return self.choose(lambda m: m.kind in kinds and _broadcastable(m.shape, sh))

    def partner_shape(self, shape: tuple, kinds: str, target: int | None = None, allow_self: bool = True):
        """A variable broadcastable to shape; when it is written into target, one that does not
        overlap target's memory partially (torch reads and writes such overlaps in an undefined
        order; the exact same variable, as in y.mul_(y), is fine)."""
        ok = [
            i
            for i, m in enumerate(self.metas)
            if m.kind in kinds
            and _broadcasts_into(m.shape, shape)
            and (target is None or (i == target and allow_self) or not self._shares_memory(i, target))
        ]
        return self.rng.choice(ok) if ok else None

    def _shares_memory(self, i: int, j: int) -> bool:
        a, b = self.values[i], self.values[j]
        return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


# ------------------------------------------------------------------ inputs
_FAMILIES = [
    [(2, 3), (3,), (1, 3), (2, 1), (2, 3), ()],
    [(3, 3), (3,), (3, 1), (3, 3)],
    [(2, 3, 2), (3, 2), (2, 1, 2), (2, 3, 2)],
    [(4,), (4,), (), (1,)],
    [(2, 2), (2,), (2, 2), (1, 2)],
    [()],
]
_EMPTY_FAMILY = [(0, 3), (3,), (0, 1)]


def random_array(nrng: np.random.Generator, shape: tuple, kind: str, lo=0.3, hi=1.5) -> np.ndarray:
    def part():
        return nrng.uniform(lo, hi, shape) * nrng.choice([-1.0, 1.0], shape)

    if kind == "c":
        return np.asarray(part() + 1j * part(), dtype=np.complex128)
    return np.asarray(part(), dtype=np.float64)


def _tangent(nrng, a: np.ndarray) -> np.ndarray:
    t = nrng.uniform(-1, 1, a.shape)
    if a.dtype.kind == "c":
        t = t + 1j * nrng.uniform(-1, 1, a.shape)
    return np.asarray(t, dtype=a.dtype)


def _exec_stmt(line: str, env: dict, op: Op, L=torch):
    if op.statement:
        exec(line, {"L": L, "np": np}, env)
        return None
    return eval(line, {"L": L, "np": np}, env)


def _pf_step(code: str, pf_env, op: Op, outs: list, n_inputs: int):
    """Mirror an accepted statement in pushforward: (pf_env, its result, None), or (None, None,
    the error) when pushforward fails on it (the fuzzer's check reports that failure)."""
    import pushforward as pf

    try:
        res = _exec_stmt(code, pf_env, op, pf)
    except Exception as e:  # noqa: BLE001 - stop mirroring
        return None, None, e
    if outs:
        vals = list(res) if isinstance(res, (tuple, list)) else [res]
        for o, v in zip(outs, vals):
            pf_env[var_name(n_inputs, o)] = v
    return pf_env, res, None


def _aliasing_differs(res_pf, args_pf: list, res_t, args_t: list) -> bool:
    """Does the (first) result alias the statement's arguments differently in the two libraries?"""
    rp = res_pf[0] if isinstance(res_pf, (tuple, list)) else res_pf
    rt = res_t[0] if isinstance(res_t, (tuple, list)) else res_t
    ptr = rt.untyped_storage().data_ptr()
    return [bool(np.may_share_memory(rp._data, a._data)) for a in args_pf] != [
        a.untyped_storage().data_ptr() == ptr for a in args_t
    ]


def generate(seed: int, n_ops: int | None = None, ops: list | None = None) -> Program | None:
    """A random program of n_ops statements (3-12 by default) that torch runs, or None."""
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    pool = ops if ops is not None else OPS
    weights = [op.weight for op in pool]
    n_ops = n_ops or rng.randint(3, 12)
    fam = _EMPTY_FAMILY if rng.random() < 0.03 else rng.choice(_FAMILIES)
    k = rng.randint(1, 3)
    shapes = [fam[0]] + [rng.choice(fam) for _ in range(k - 1)]
    cplx = rng.random() < 0.35
    kinds = ["c" if cplx and (j == 0 or rng.random() < 0.6) else "f" for j in range(k)]
    inputs = [random_array(nrng, s, kd) for s, kd in zip(shapes, kinds)]
    ctx = Ctx(rng, k)
    env: dict = {}
    pf_env = None  # pushforward's values, mirrored from the first LAYOUT_ALIASING statement on
    pf_dead = False  # pushforward failed on a statement: no mirror (the check reports that failure)
    layout_rules = 0
    for j, a in enumerate(inputs):
        t = torch.from_numpy(a.copy())
        env[f"x{j}"] = t
        ctx.metas.append(Meta(tuple(a.shape), kinds[j]))
        ctx.values.append(t)
    stmts: list = []
    tries = 0
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        while len(stmts) < n_ops and tries < 30 * n_ops:
            tries += 1
            op = rng.choices(pool, weights)[0]
            r = op.gen(ctx)
            if r is None:
                continue
            args, params = r
            if op.dom is not None:
                try:
                    if not op.dom([ctx.values[a] for a in args], params):
                        continue
                except Exception:
                    continue
            nv = len(ctx.metas)
            st = Stmt(op.name, list(args), dict(params), [])
            names = [var_name(k, a) for a in args]
            p2 = {
                kk: _PLACEHOLDER.sub(lambda m: names[int(m.group(1))], v) if isinstance(v, str) else v
                for kk, v in params.items()
            }
            code = op.render.format(*names, **p2)
            try:
                res = _exec_stmt(code, env, op)
            except Exception:
                _replay(inputs, stmts, env, ctx, nv)
                continue
            outs = []
            if not op.statement:
                vals = list(res) if isinstance(res, (tuple, list)) else [res]
                if isinstance(res, (tuple, list)):
                    st.params["_multi"] = True
                if not vals or len(vals) > 6 or not all(isinstance(v, torch.Tensor) for v in vals):
                    continue
                multi_view = isinstance(res, (tuple, list)) and op.name in ("split", "chunk", "unbind")
                for v in vals:
                    no_ip = multi_view or (v._base is not None and any(ctx.metas[a].no_inplace for a in args))
                    outs.append(nv + len(outs))
                    ctx.metas.append(Meta(tuple(v.shape), _kind(v), no_ip))
                    ctx.values.append(v)
                    env[var_name(k, outs[-1])] = v
            st.outs = outs
            # an in-place statement may change any alias of its target; a pure op only its results
            if not _sane(ctx.values if op.statement else ctx.values[nv:]):
                _replay(inputs, stmts, env, ctx, nv)
                continue
            layout_view = LAYOUT_VIEWS and ".view(" in code and any(a in ctx.torch_layout for a in args)
            if (op.name in LAYOUT_ALIASING or layout_view) and pf_env is None and not pf_dead:
                pf_env = _pf_replay(inputs, stmts)
                pf_dead = pf_env is None
            if pf_env is not None:
                args_pf = [pf_env[var_name(k, a)] for a in args]
                pf_env, res_pf, err = _pf_step(code, pf_env, op, outs, k)
                if layout_view and err is not None and "view size is not compatible" in str(err):
                    _replay(inputs, stmts, env, ctx, nv)  # a view only torch's layout allows
                    pf_env, pf_dead = None, False  # (rebuilt when next needed)
                    layout_rules += 1
                    continue
                pf_dead = pf_env is None
                if (
                    op.name in LAYOUT_ALIASING
                    and pf_env is not None
                    and outs
                    and _aliasing_differs(res_pf, args_pf, res, [ctx.values[a] for a in args])
                ):
                    ctx.frozen.update(outs)
                    ctx.frozen.update(a for a in args if a >= k)
                    layout_rules += 1
            stmts.append(st)
            for o in outs:
                v = ctx.values[o]
                # (element-wise results are laid out as torch's: their layout is checked, not excused)
                if any(a in ctx.torch_layout for a in args) or (
                    v._base is None
                    and v.dim() >= 2
                    and v.numel() > 1
                    and not v.is_contiguous()
                    and "elementwise" not in op.tags
                ):
                    ctx.torch_layout.add(o)
            if op.name in FROZEN_RESULTS or any(a in ctx.frozen for a in args):
                # results derived from a frozen value may alias it in one library only (contiguous(),
                # reshape: a view or a copy by layout, and the layouts differ), so they are frozen too
                ctx.frozen.update(outs)
    if len(stmts) < min(n_ops, 2):
        return None
    prog = Program(inputs, stmts, seed=seed, layout_rules=layout_rules)
    prog.tangents = [_tangent(nrng, a) for a in inputs]
    prog.outputs = [i for i in range(k, len(ctx.metas))]
    set_cotangents(prog, ctx.metas, nrng)
    return prog


def _pf_replay(inputs, stmts) -> dict | None:
    """pushforward's values of the variables after the accepted statements (None: it failed)."""
    import pushforward as pf

    env = {f"x{j}": pf.tensor(a.copy()) for j, a in enumerate(inputs)}
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            for st in stmts:
                exec(render_stmt(st, len(inputs)), {"L": pf, "np": np}, env)
    except Exception:  # noqa: BLE001 - the check reports pushforward's failure
        return None
    return env


def set_cotangents(prog: Program, metas, nrng) -> None:
    prog.cotangents = {}
    for o in prog.outputs:
        m = metas[o]
        if m.kind in "fc":
            prog.cotangents[o] = _tangent(nrng, np.zeros(m.shape, np.complex128 if m.kind == "c" else np.float64))


def _sane(values) -> bool:
    for v in values:
        if v.is_floating_point() or v.is_complex():
            if v.numel() and not bool((v.abs() < MAX_ABS).all()):
                return False
    return True


def _replay(inputs, stmts, env, ctx, nv: int) -> None:
    """Rebuild the torch state from the accepted statements (a rejected one may have written)."""
    k = len(inputs)
    env.clear()
    del ctx.metas[nv:], ctx.values[nv:]
    for j, a in enumerate(inputs):
        t = torch.from_numpy(a.copy())
        env[f"x{j}"] = t
        ctx.values[j] = t
    for st in stmts:
        exec(render_stmt(st, k), {"L": torch, "np": np}, env)
        for o in st.outs:
            ctx.values[o] = env[var_name(k, o)]


def metas_of(prog: Program) -> dict:
    """Shapes and kinds of every variable, by running the program in torch."""
    env = run_env(prog, torch)
    return {i: Meta(tuple(t.shape), _kind(t)) for i, t in env.items()}


def run_env(prog: Program, L) -> dict:
    env = {
        f"x{j}": (torch.from_numpy(a.copy()) if L is torch else L.tensor(a.copy())) for j, a in enumerate(prog.inputs)
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for st in prog.stmts:
            exec(render_stmt(st, prog.n_inputs), {"L": L, "np": np}, env)
    out = {}
    for name, t in env.items():
        if name[0] in "xv" and name[1:].isdigit():
            out[int(name[1:])] = t
    return out
