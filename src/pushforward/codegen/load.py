"""Load derivatives.yaml into frozen dataclasses and validate every entry.

Errors name the entry (its `name:` line and line number) and what is wrong with it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

YAML_PATH = Path(__file__).resolve().parent.parent / "ops" / "derivatives.yaml"

TENSOR_TYPES = ("Tensor", "Tensor?", "Tensor[]")
ARG_TYPES = (
    "int",
    "int?",
    "int[]",
    "int[]?",
    "float",
    "float?",
    "Scalar",
    "Scalar?",
    "bool",
    "bool?",
    "str",
    "str?",
    "dtype?",
    "Any",
)
# Names a formula may use besides its own op's names, helpers and ops.
CREATION = ("zeros_like", "ones_like", "full_like", "zeros", "ones", "full", "empty_like")
# Op names (sum, abs, max, min, ...) shadow the builtins of the same name inside formulas.
BUILTINS = (
    "len",
    "range",
    "tuple",
    "list",
    "int",
    "float",
    "complex",
    "bool",
    "isinstance",
    "enumerate",
    "zip",
    "None",
    "True",
    "False",
    "slice",
    "Ellipsis",
    "xp",
    "all",
    "any",
    "reversed",
    "sorted",
    "dict",
    "map",
)
KNOWN_KEYS = {
    "name",
    "kernel",
    "composite",
    "view",
    "non_differentiable",
    "differentiable",
    "output_differentiability",
    "method",
    "function",
    "inplace",
    "doc",
    "aliases",
    "numpy",
    "namespace",
    "batch",
    "taylor",
    "layout",
    "dask",
    "sparsity",
    "curvature",
    "scalar_operator",
}
# `taylor: series_<name>`: the op's Taylor rule, a function of ops/formulas/taylor.py (func.jet runs it)
TAYLOR_PATH = YAML_PATH.parent / "formulas" / "taylor.py"
# `dask: <reason>`: Dask cannot run the op; the reasons are the keys of REASONS in dispatch/lazyops.py
LAZYOPS_PATH = YAML_PATH.parent.parent / "dispatch" / "lazyops.py"
# `layout:` the memory layout of the kernel's result (and so of its tangent), when it is not NumPy's
LAYOUTS = ("contiguous", "column_major")
# `sparsity: rule` / `rule(arg)`: how the op moves dependency patterns (func/sparsity_rules.py)
SPARSITY_RULES = ("reduction", "along_dim", "contraction", "same_rows", "moves", "moves_by_index")
# `scalar_operator:` the function of Python's `operator` module that is the kernel on two real
# floating NumPy scalars, the op's other arguments at their defaults (one IEEE operation either way)
SCALAR_OPERATORS = ("add", "sub", "mul", "truediv")
# `curvature:` what the op's second derivatives are, when its forward formula does not say so
CURVATURES = ("linear", "bilinear", "quotient")
# `batch: rule` or `batch: rule(arg, ...)`: how the op runs on batched tensors (vmap, batched
# tangents); the rules live in batching.py and name the op's non-Tensor arguments they adjust.
_BATCH = re.compile(r"^([a-z_]+)(?:\(([a-z_0-9, ]*)\))?$")


class SpecError(ValueError):
    """A derivatives.yaml entry is malformed; the message points at the entry."""


@dataclass(frozen=True)
class Param:
    name: str
    type: str
    default: str | None = None  # Python source of the default, None when required
    kw_only: bool = False
    vararg: bool = False  # `int[] *shape`: torch's view(2, 3) as well as view((2, 3))

    @property
    def is_tensor(self) -> bool:
        return self.type in TENSOR_TYPES


@dataclass(frozen=True)
class OpEntry:
    name: str
    params: tuple[Param, ...]
    returns: tuple[str, ...]
    line: int
    kernel: str | None = None
    composite: str | None = None
    view: str = "no"  # "no", "yes", "maybe"
    backward: tuple[tuple[str, str], ...] = ()  # (input, formula)
    forward: tuple[tuple[str, str], ...] = ()  # (output key, formula or auto_*)
    non_differentiable: tuple[str, ...] = ()
    differentiable: bool = True
    output_differentiability: tuple[bool, ...] = ()
    method: bool = True
    function: bool = True
    inplace: bool | str = False  # true: '<name>_'; a string: that method name
    doc: str = ""
    aliases: tuple[str, ...] = ()
    numpy: tuple[str, ...] = ()  # NumPy's names for the op where they differ from its name and aliases
    namespace: str = ""  # e.g. "nn.functional": public there (as pf.nn.functional.<name>), not as pf.<name>
    batch: str = ""  # batching rule (batching.py); "" derives it (see batch_rule)
    taylor: str = ""  # Taylor rule (ops/formulas/taylor.py); "" derives it from the forward formula
    layout: str = ""  # "contiguous" / "column_major": the kernel's result's (and tangent's) layout
    dask: str = ""  # why Dask cannot run the op (a key of dispatch/lazyops.py's REASONS), "" if it can
    sparsity: str = ""  # sparsity rule (func/sparsity_rules.py); "" derives it from batch and view
    curvature: str = ""  # "linear" / "bilinear" / "quotient"; "" when the forward formula says it
    scalar_operator: str = ""  # the operator module's function that is the kernel on two real floating scalars

    @property
    def tensor_params(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if p.is_tensor)

    @property
    def arg_params(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if not p.is_tensor)

    @property
    def diff_params(self) -> tuple[Param, ...]:
        if not self.differentiable:
            return ()
        return tuple(p for p in self.tensor_params if p.name not in self.non_differentiable)

    def where(self) -> str:
        return f"derivatives.yaml line {self.line}, entry '{self.name}'"

    @property
    def plain_aliases(self) -> tuple[str, ...]:
        """The aliases beside the op's name (`arcsin`), in its own namespace."""
        return tuple(a for a in self.aliases if "." not in a)

    @property
    def namespace_aliases(self) -> tuple[tuple[str, str], ...]:
        """(namespace, name) of the aliases in a sub-namespace: `linalg.solve` is pf.linalg.solve."""
        return tuple(tuple(a.rsplit(".", 1)) for a in self.aliases if "." in a)


_SIG = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*\((.*)\)\s*->\s*(.+?)\s*$")


def parse_signature(sig: str, where: str) -> tuple[str, tuple[Param, ...], tuple[str, ...]]:
    m = _SIG.match(sig)
    if not m:
        raise SpecError(f"{where}: bad signature {sig!r} (expected 'name(Type arg, ...) -> Tensor')")
    name, params_src, ret = m.groups()
    params = []
    kw = False
    for part in _split_top(params_src):
        part = part.strip()
        if not part:
            continue
        if part == "*":
            kw = True
            continue
        default = None
        if "=" in part:
            part, default = (s.strip() for s in part.split("=", 1))
        bits = part.split()
        if len(bits) != 2:
            raise SpecError(f"{where}: bad parameter {part!r} (expected 'Type name')")
        typ, pname = bits
        vararg = pname.startswith("*")
        pname = pname.lstrip("*")
        if vararg and not typ.endswith("[]"):
            raise SpecError(f"{where}: only list types may be variadic ('{typ} *{pname}')")
        if typ not in TENSOR_TYPES + ARG_TYPES:
            raise SpecError(
                f"{where}: unknown type {typ!r} of parameter '{pname}' (known: {', '.join(TENSOR_TYPES + ARG_TYPES)})"
            )
        if default is not None:
            try:
                ast.parse(default, mode="eval")
            except SyntaxError:
                raise SpecError(f"{where}: bad default {default!r} for '{pname}'") from None
        params.append(Param(pname, typ, default, kw, vararg))
        kw = kw or vararg
    names = [p.name for p in params]
    reserved = {"grad", "result", "needs"} & set(names)
    if reserved:
        raise SpecError(f"{where}: parameter name(s) {sorted(reserved)} are reserved for formulas")
    if len(set(names)) != len(names):
        raise SpecError(f"{where}: duplicate parameter names in {sig!r}")
    ret = ret.strip()
    if ret in ("Tensor", "Tensor[]"):
        returns = ("result",) if ret == "Tensor" else ("result[]",)
    elif ret.startswith("(") and ret.endswith(")"):
        returns = []
        for part in _split_top(ret[1:-1]):
            bits = part.split()
            if len(bits) != 2 or bits[0] != "Tensor":
                raise SpecError(f"{where}: bad return {part!r} (expected 'Tensor name')")
            returns.append(bits[1])
        returns = tuple(returns)
    else:
        raise SpecError(f"{where}: bad return type {ret!r}")
    return name, tuple(params), returns


def _split_top(s: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return out


def formula_names(src: str, where: str) -> set[str]:
    """Free names of a formula expression (comprehension/lambda variables excluded)."""
    try:
        tree = ast.parse(src, mode="eval")
    except SyntaxError as e:
        raise SpecError(f"{where}: formula {src!r} is not a Python expression: {e.msg}") from None
    bound = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.comprehension):
            for t in ast.walk(node.target):
                if isinstance(t, ast.Name):
                    bound.add(t.id)
        elif isinstance(node, ast.Lambda):
            bound.update(a.arg for a in node.args.args)
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - bound


def load(path: Path | str = YAML_PATH, helpers: set[str] | None = None) -> list[OpEntry]:
    """Parse and validate the YAML file; raise SpecError naming the entry on any problem."""
    text = Path(path).read_text()
    try:
        raw = yaml.compose(text)
    except yaml.YAMLError as e:
        raise SpecError(f"derivatives.yaml is not valid YAML: {e}") from None
    data = yaml.safe_load(text)
    if not isinstance(data, list):
        raise SpecError("derivatives.yaml must be a list of entries")
    lines = [n.start_mark.line + 1 for n in raw.value] if raw is not None else []
    if helpers is None:
        helpers = helper_names()
    entries = [_entry(item, line) for item, line in zip(data, lines)]
    op_names = set()
    for e in entries:
        if e.name in op_names:
            raise SpecError(f"{e.where()}: op '{e.name}' is declared twice")
        op_names.add(e.name)
        op_names.update(e.aliases)
    numpy_names: dict[str, str] = {}
    for e in entries:
        for n in e.numpy:
            if n in numpy_names or n in op_names or n in e.aliases:
                other = numpy_names.get(n, "an op or alias of that name")
                raise SpecError(f"{e.where()}: NumPy name '{n}' is already taken ({other})")
            numpy_names[n] = e.name
    for e in entries:
        _validate_formulas(e, op_names, helpers)
    _validate_taylor(entries)
    _validate_dask(entries)
    return entries


def taylor_rule_names() -> set[str]:
    """The Taylor rules an entry's `taylor:` key may name: the `__all__` of ops/formulas/taylor.py."""
    found = _literal_all(TAYLOR_PATH)
    if found is None:
        raise SpecError(f"{TAYLOR_PATH.name} has no __all__ list of Taylor rules")
    return found


def _validate_taylor(entries: list[OpEntry]) -> None:
    known = None
    for e in entries:
        if not e.taylor:
            continue
        if e.composite is not None or not e.differentiable:
            raise SpecError(
                f"{e.where()}: 'taylor: {e.taylor}' on a composite or non-differentiable op (a composite gets "
                "its Taylor series from its composition; a non-differentiable op's result is constant)"
            )
        known = taylor_rule_names() if known is None else known
        if e.taylor not in known:
            raise SpecError(
                f"{e.where()}: unknown Taylor rule '{e.taylor}' (the rules are the functions in "
                f"ops/formulas/taylor.py's __all__: {', '.join(sorted(n for n in known if n.startswith('series_')))})"
            )


def helper_names() -> set[str]:
    """Public helper functions of the modules of ops/formulas/, with those of the modules they
    star-import (ops/composites/): parsed, not imported, so the generator runs standalone.
    A file's `__all__ = [...]` and its literal `__all__ += [...]` blocks count."""
    names = set()
    for path in sorted((YAML_PATH.parent / "formulas").glob("*.py")):
        if path.name == "__init__.py" or path == TAYLOR_PATH:  # Taylor rules are not formula helpers
            continue
        found = _literal_all(path, follow=True)
        if found is None:
            raise SpecError(f"{path.name} has no __all__ list of helpers")
        names |= found
    return names


def _literal_all(path: Path, follow: bool = False) -> set[str] | None:
    names: set[str] | None = None
    star: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
            names = set(ast.literal_eval(node.value))
        elif (
            isinstance(node, ast.AugAssign)
            and getattr(node.target, "id", None) == "__all__"
            and names is not None
            and isinstance(node.value, (ast.List, ast.Tuple))
        ):
            names |= set(ast.literal_eval(node.value))
        elif (
            follow
            and isinstance(node, ast.ImportFrom)
            and node.level >= 1
            and node.module
            and [a.name for a in node.names] == ["*"]
        ):
            base = path.parent
            for _ in range(node.level - 1):
                base = base.parent
            found = _literal_all(base.joinpath(*node.module.split(".")).with_suffix(".py"))
            if found is None:
                raise SpecError(f"{node.module}.py (re-exported by {path.name}) has no __all__ list of helpers")
            star |= found
    return None if names is None else names | star


def _entry(item, line: int) -> OpEntry:
    if not isinstance(item, dict) or "name" not in item:
        raise SpecError(f"derivatives.yaml line {line}: each entry needs a 'name:' signature")
    where = f"derivatives.yaml line {line}, entry '{item['name']}'"
    name, params, returns = parse_signature(str(item["name"]), where)
    where = f"derivatives.yaml line {line}, entry '{name}'"
    pnames = {p.name for p in params}
    outs = _output_keys(returns)
    backward, forward = [], []
    for key, val in item.items():
        if key in KNOWN_KEYS:
            continue
        if key in pnames:
            backward.append((key, str(val)))
        elif key in outs:
            forward.append((key, str(val)))
        else:
            raise SpecError(
                f"{where}: unknown key '{key}' (not a parameter, an output key "
                f"{sorted(outs)} or one of {sorted(KNOWN_KEYS)})"
            )
    view = item.get("view", False)
    view = {True: "yes", False: "no", "maybe": "maybe"}.get(view)
    if view is None:
        raise SpecError(f"{where}: 'view' must be true, false or maybe")
    entry = OpEntry(
        name=name,
        params=params,
        returns=returns,
        line=line,
        kernel=item.get("kernel"),
        composite=item.get("composite"),
        view=view,
        backward=tuple(backward),
        forward=tuple(forward),
        non_differentiable=tuple(item.get("non_differentiable", ())),
        differentiable=bool(item.get("differentiable", True)),
        output_differentiability=tuple(item.get("output_differentiability", ())),
        method=bool(item.get("method", bool(params) and params[0].name == "self")),
        function=bool(item.get("function", True)),
        inplace=item.get("inplace", False),
        doc=str(item.get("doc", "")).strip(),
        aliases=_aliases(item, where),
        numpy=_names(item, "numpy", where),
        namespace=str(item.get("namespace", "")),
        batch=str(item.get("batch", "")).strip(),
        taylor=str(item.get("taylor", "")).strip(),
        layout=str(item.get("layout", "")).strip(),
        dask=str(item.get("dask", "")).strip(),
        sparsity=str(item.get("sparsity", "")).strip(),
        curvature=str(item.get("curvature", "")).strip(),
        scalar_operator=str(item.get("scalar_operator", "")).strip(),
    )
    _validate_structure(entry, where)
    return entry


def _aliases(item: dict, where: str) -> tuple[str, ...]:
    """`aliases: [arcsin, special.expit]`: names, or `namespace.name` for a sub-namespace's."""
    value = tuple(item.get("aliases", ()))
    for a in value:
        if not isinstance(a, str) or not all(part.isidentifier() for part in a.split(".")):
            raise SpecError(f"{where}: alias {a!r} is not a name or a dotted namespace.name")
    return value


def _names(item: dict, key: str, where: str) -> tuple[str, ...]:
    """A key's list of Python identifiers (`numpy: [power]`)."""
    value = item.get(key, ())
    if not isinstance(value, (list, tuple)) or not all(isinstance(n, str) and n.isidentifier() for n in value):
        raise SpecError(f"{where}: '{key}' must be a list of names, got {value!r}")
    return tuple(value)


def _output_keys(returns: tuple[str, ...]) -> set[str]:
    if len(returns) == 1:
        return {"result"}
    return {f"result{i}" for i in range(len(returns))}


def batch_rule(e: OpEntry) -> str:
    """The op's batching rule: its `batch:` key, else derived (element-wise ops broadcast; the
    rest run once per batch element until they declare a rule)."""
    if e.batch:
        return e.batch
    if dict(e.forward).get("result") == "auto_element_wise":
        return "elementwise"
    return "loop"


def _validate_batch(e: OpEntry, where: str) -> None:
    if not e.batch:
        return
    names = {p.name for p in e.params}
    for part in e.batch.split("+"):
        m = _BATCH.match(part.strip())
        if not m:
            raise SpecError(
                f"{where}: bad batch rule {e.batch!r} (expected 'rule', 'rule(arg, ...)' or 'rule(...) + rule(...)')"
            )
        bad = [a.strip() for a in (m.group(2) or "").split(",") if a.strip() and a.strip() not in names]
        if bad:
            raise SpecError(f"{where}: batch rule {e.batch!r} names {bad}, which are not parameters of the op")


def _validate_structure(e: OpEntry, where: str) -> None:
    _validate_batch(e, where)
    _validate_facts(e, where)
    if (e.kernel is None) == (e.composite is None):
        raise SpecError(f"{where}: needs exactly one of 'kernel' or 'composite'")
    for n in e.non_differentiable:
        if n not in {p.name for p in e.tensor_params}:
            raise SpecError(f"{where}: non_differentiable names '{n}', which is not a Tensor parameter")
    if e.composite is not None:
        if e.backward or e.forward:
            raise SpecError(f"{where}: a composite op gets its derivatives from its composition; remove its formulas")
        return
    if not e.differentiable:
        if e.backward or e.forward:
            raise SpecError(f"{where}: 'differentiable: false' but formulas are given")
        return
    given = dict(e.backward)
    for p in e.diff_params:
        if p.name not in given:
            raise SpecError(
                f"{where}: missing backward formula for differentiable input '{p.name}' "
                f"(add '{p.name}: <formula>' or list it under non_differentiable)"
            )
    for n in given:
        if n not in {p.name for p in e.diff_params}:
            raise SpecError(f"{where}: backward formula given for '{n}', which is not a differentiable Tensor input")
    if e.output_differentiability and len(e.output_differentiability) != len(e.returns):
        raise SpecError(
            f"{where}: output_differentiability has {len(e.output_differentiability)} entries "
            f"for {len(e.returns)} outputs"
        )
    fw = dict(e.forward)
    for key, f in fw.items():
        if f == "auto_element_wise":
            if len(e.diff_params) != 1 or len(e.returns) != 1 or e.diff_params[0].type != "Tensor":
                raise SpecError(
                    f"{where}: auto_element_wise needs exactly one differentiable Tensor input and "
                    f"one output (this op has {len(e.diff_params)} and {len(e.returns)})"
                )
        elif f == "auto_linear":
            pass


def _validate_formulas(e: OpEntry, op_names: set[str], helpers: set[str]) -> None:
    where = e.where()
    common = set(op_names) | helpers | set(CREATION) | set(BUILTINS) | {p.name for p in e.arg_params}
    outs = _output_keys(e.returns)
    res_names = outs | {"result"}
    diff = {p.name for p in e.diff_params}
    nondiff = {p.name for p in e.tensor_params} - diff
    for inp, f in e.backward:
        allowed = common | {p.name for p in e.params} | res_names | {"grad"}
        bad = formula_names(f, f"{where}, backward for '{inp}'") - allowed
        if bad:
            raise SpecError(
                f"{where}: backward formula for '{inp}' uses unknown name(s) {sorted(bad)}; "
                f"allowed: grad, result, the op's parameters, ops and helpers of ops/formulas/"
            )
    for key, f in e.forward:
        if f in ("auto_element_wise", "auto_linear", "zero"):
            continue
        names = formula_names(f, f"{where}, forward formula '{key}'")
        bare = names & diff
        if bare:
            n = sorted(bare)[0]
            raise SpecError(
                f"{where}: forward formula '{key}' uses bare '{n}'; write '{n}_p' for its primal "
                f"or '{n}_t' for its tangent"
            )
        allowed = common | nondiff | res_names | {f"{n}_p" for n in diff} | {f"{n}_t" for n in diff}
        bad = names - allowed
        if bad:
            raise SpecError(
                f"{where}: forward formula '{key}' uses unknown name(s) {sorted(bad)}; allowed: "
                "<input>_p, <input>_t, result, the op's arguments, ops and helpers of ops/formulas/"
            )


_RULE = re.compile(r"^([a-z_]+)(?:\((.*)\))?$")


def sparsity_rule(e: OpEntry) -> tuple[str, str | None]:
    """The `sparsity:` key as (rule, argument or None): `contraction(ij,jk->ik)`, `reduction`."""
    m = _RULE.match(e.sparsity)
    return (m.group(1), m.group(2)) if m else (e.sparsity, None)


def _validate_facts(e: OpEntry, where: str) -> None:
    """The keys saying how the op's result is laid out, what its derivatives' patterns and second
    derivatives are: known values, and none that contradicts what the rest of the entry says."""
    fw = dict(e.forward)
    if e.layout:
        if e.layout not in LAYOUTS:
            raise SpecError(f"{where}: unknown layout '{e.layout}' (known: {', '.join(LAYOUTS)})")
        if e.composite is not None or e.view != "no":
            raise SpecError(
                f"{where}: 'layout: {e.layout}' on a composite or a view (a view is laid out as its input, "
                "a composite as the ops it is built from)"
            )
    if e.sparsity:
        rule, arg = sparsity_rule(e)
        if rule not in SPARSITY_RULES:
            raise SpecError(f"{where}: unknown sparsity rule '{e.sparsity}' (known: {', '.join(SPARSITY_RULES)})")
        if e.composite is not None or not e.differentiable:
            raise SpecError(
                f"{where}: 'sparsity: {e.sparsity}' on a composite or non-differentiable op (a composite's "
                "patterns come from its ops; a non-differentiable op's output depends on nothing)"
            )
        if batch_rule(e).split("(")[0] in ("elementwise", "masked", "copy"):
            raise SpecError(
                f"{where}: 'sparsity: {e.sparsity}' contradicts 'batch: {batch_rule(e)}' (an element-wise op "
                "moves patterns element by element)"
            )
        if arg is not None and rule != "contraction":
            raise SpecError(f"{where}: sparsity rule '{rule}' takes no argument")
        if arg is not None and "->" not in arg and arg not in {p.name for p in e.arg_params if p.type == "str"}:
            raise SpecError(
                f"{where}: 'sparsity: {e.sparsity}': the argument is an einsum equation ('ij,jk->ik') or the "
                "name of the op's str parameter holding one"
            )
    _validate_scalar_operator(e, where)
    if e.curvature:
        if e.curvature not in CURVATURES:
            raise SpecError(f"{where}: unknown curvature '{e.curvature}' (known: {', '.join(CURVATURES)})")
        if e.composite is not None or not e.differentiable:
            raise SpecError(f"{where}: 'curvature: {e.curvature}' on a composite or non-differentiable op")
        if e.curvature == "linear" and "auto_linear" in fw.values():
            raise SpecError(f"{where}: 'curvature: linear' repeats what 'auto_linear' says; remove it")
        if e.curvature != "linear" and (
            [p.name for p in e.diff_params] != ["self", "other"] or batch_rule(e) != "elementwise"
        ):
            raise SpecError(
                f"{where}: 'curvature: {e.curvature}' is for element-wise ops of two differentiable Tensors "
                "`self` and `other` (the product's and the quotient's second derivatives)"
            )


def dask_reasons() -> set[str]:
    """The reasons a `dask:` key may give: the keys of REASONS in dispatch/lazyops.py (parsed)."""
    for node in ast.parse(LAZYOPS_PATH.read_text()).body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(getattr(t, "id", None) == "REASONS" for t in targets) and isinstance(node.value, ast.Dict):
                return {k.value for k in node.value.keys if isinstance(k, ast.Constant)}
    raise SpecError(f"{LAZYOPS_PATH.name} has no REASONS dict of the reasons Dask cannot run an op")


def composite_helpers(e: OpEntry) -> list[str]:
    """The helper functions (`c_<name>`, `<name>_composite`) a composite op's expression calls."""
    node = ast.parse(e.composite, mode="eval").body
    calls = [n.func.id for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
    return [c for c in calls if c.startswith("c_") or c.endswith("_composite")]


def dask_table(entries: list[OpEntry]) -> dict[str, str]:
    """Name -> reason for everything Dask cannot run: each kernel op with a `dask:` key by its name,
    and the helpers a composite op with one calls by their names without `c_` / `_composite` (the
    names methods/lazy.py guards them under)."""
    table: dict[str, str] = {}
    for e in entries:
        if not e.dask:
            continue
        if e.composite is None:
            table[e.name] = e.dask
        for h in composite_helpers(e) if e.composite is not None else ():
            table[h.removeprefix("c_").removesuffix("_composite")] = e.dask
    return table


def _validate_dask(entries: list[OpEntry]) -> None:
    known = None
    by_helper: dict[str, OpEntry] = {}
    for e in entries:
        if e.dask:
            known = dask_reasons() if known is None else known
            if e.dask not in known:
                raise SpecError(f"{e.where()}: unknown dask reason '{e.dask}' (known: {', '.join(sorted(known))})")
            if e.composite is not None and not composite_helpers(e):
                raise SpecError(
                    f"{e.where()}: 'dask: {e.dask}' on a composite that calls no helper (c_<name>): the ops it "
                    "is built from are refused or run on their own; remove the key"
                )
        for h in composite_helpers(e) if e.composite is not None else ():
            other = by_helper.setdefault(h, e)
            if other.dask != e.dask:
                raise SpecError(
                    f"{e.where()}: calls {h} as '{other.name}' does, but their 'dask:' keys differ "
                    f"({e.dask or 'none'} and {other.dask or 'none'}): Dask refuses a helper for every op or none"
                )


def _validate_scalar_operator(e: OpEntry, where: str) -> None:
    """`scalar_operator:` one of SCALAR_OPERATORS, on an op of two Tensors whose other arguments all
    have defaults (the in-place paths call it on two elements with those defaults only)."""
    if not e.scalar_operator:
        return
    if e.scalar_operator not in SCALAR_OPERATORS:
        raise SpecError(
            f"{where}: unknown scalar_operator '{e.scalar_operator}' (known: {', '.join(SCALAR_OPERATORS)})"
        )
    if [p.is_tensor for p in e.params].count(True) != 2 or any(p.default is None for p in e.arg_params):
        raise SpecError(
            f"{where}: 'scalar_operator: {e.scalar_operator}' needs two Tensor parameters and defaults for the others"
        )
