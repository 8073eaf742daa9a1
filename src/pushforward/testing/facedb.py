"""The faces' database, assembled: every entry keyed "<root>:<name>" with its root ("np": NumPy
and pushforward.numpy, NumPy's own dispatch on tensors too; "scipy": pushforward.scipy against
SciPy; "xp": pushforward.array_api against array_api_strict), and how each root runs: the
reference namespace, the face namespaces, how inputs become arrays on either side.

>>> root, face = DATABASE["np:sin"]
>>> root, [label for label, _ in namespaces(root, face)]
('np', ['dispatch', 'pushforward.numpy'])
"""

from __future__ import annotations

from typing import Any

import array_api_strict
import numpy
import scipy

from .. import array_api as xp
from .. import numpy as pnumpy
from .. import scipy as pscipy
from .faceinfo import CHECKS, Face
from .faces_check import Unsupported, check_values, run_check
from .opdb_faces import NUMPY_FACES, SCIPY_FACES
from .opdb_faces_array_api import ARRAY_API_FACES
from .opdb_faces_numpy import FFT_FACES, LINALG_FACES, MORE_NUMPY_FACES, OP_SWEPT, RANDOM_FACES
from .opdb_faces_scipy import MORE_SCIPY_FACES
from .opdb_faces_ufuncs import ELEMENTWISE, UFUNC_METHOD_FACES, elementwise_faces
from .opinfo import op_record

__all__ = [
    "DATABASE",
    "ROOT_ENTRIES",
    "namespaces",
    "reference",
    "asarrays",
    "same_errors",
    "check_entry",
    "check_row",
    "faces_database",
]

ROOT_ENTRIES: dict[str, dict[str, Face]] = {
    "np": {
        **NUMPY_FACES,
        **elementwise_faces(n for n in ELEMENTWISE if hasattr(pnumpy, n)),
        **UFUNC_METHOD_FACES,
        **MORE_NUMPY_FACES,
        **LINALG_FACES,
        **FFT_FACES,
        **RANDOM_FACES,
    },
    "scipy": {**SCIPY_FACES, **MORE_SCIPY_FACES},
    "xp": ARRAY_API_FACES,
}
# scipy.special functions that are ops of derivatives.yaml: the op database sweeps them under jet,
# pf.compile and Dask
for _name, _face in ROOT_ENTRIES["scipy"].items():
    if op_record(_name) is not None or op_record(f"special_{_name}") is not None:
        _face.skip = {**OP_SWEPT, **_face.skip}

DATABASE: dict[str, tuple[str, Face]] = {
    f"{root}:{name}": (root, face) for root, entries in ROOT_ENTRIES.items() for name, face in entries.items()
}


def namespaces(root: str, face: Face) -> list[tuple[str, Any]]:
    """The face namespaces an entry's values run in (NumPy's dispatch unless the call cannot reach it)."""
    if root == "np":
        return ([("dispatch", numpy)] if face.dispatch and face.inputs else []) + [("pushforward.numpy", pnumpy)]
    return [("pushforward.scipy", pscipy)] if root == "scipy" else [("pushforward.array_api", xp)]


def reference(root: str) -> Any:
    """The namespace the root's values are compared with."""
    return {"np": numpy, "scipy": scipy, "xp": array_api_strict}[root]


def asarrays(root: str) -> tuple:
    """(reference's asarray, the face's asarray): None where arrays and `tensor` do."""
    return (array_api_strict.asarray, xp.asarray) if root == "xp" else (None, None)


def same_errors(root: str) -> bool:
    """Whether the face must raise where the reference does (array_api_strict refuses more than the
    standard asks: those calls are skipped)."""
    return root != "xp"


def check_entry(key: str) -> tuple[list, list]:
    """(failures, unsupported checks) of one entry: values and dtypes in every namespace it runs in,
    then each derivative and transform check that applies (in the last namespace)."""
    root, face = DATABASE[key]
    ref_asarray, asarray = asarrays(root)
    errors, unsupported = [], []
    spaces = namespaces(root, face)
    for label, ns in spaces:
        try:
            check_values(face, reference(root), ns, ref_asarray, asarray, same_errors(root))
        except Unsupported as e:
            unsupported.append(f"values[{label}]: {e}")
            return errors, unsupported
        except Exception as e:  # noqa: BLE001 - every failing check is reported
            errors.append(f"values[{label}]: {type(e).__name__}: {e}")
    label, ns = spaces[-1]
    for check in CHECKS[1:]:
        if face.runs(check):
            try:
                run_check(face, check, ns, asarray)
            except Unsupported as e:
                unsupported.append(f"{check}: {e}")
            except Exception as e:  # noqa: BLE001
                errors.append(f"{check}[{label}]: {type(e).__name__}: {str(e)[:600]}")
    return errors, unsupported


# `pushforward check`'s columns for the checks of an entry
_COLUMNS = {"backward": "backward", "forward": "forward", "gradgrad": "fwd_over_rev", "vmap": "batched"}
_COLUMNS.update({"jet": "taylor", "compile": "compiled", "dask": "lazy"})


def check_row(key: str, fast: bool = False) -> dict:
    """The row of `pushforward check --faces` for one entry (`fast` is accepted for the op rows'
    signature: an entry's checks are already small)."""
    errors, _ = check_entry(key)
    face = DATABASE[key][1]
    row: dict = {"kind": "face", "error": errors[0] if errors else None}
    for check, column in _COLUMNS.items():
        if face.runs(check):
            row[column] = not any(e.startswith(check) for e in errors)
    row.setdefault("backward", None)
    row.setdefault("forward", None)
    return row


def faces_database() -> tuple[dict, Any]:
    """(every entry by its key, "np:<name>", "scipy:<name>", "xp:<name>"; check_row): `pushforward
    check --faces`."""
    return DATABASE, check_row
