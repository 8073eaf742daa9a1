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
from .faceinfo import Face
from .opdb_faces import NUMPY_FACES, SCIPY_FACES
from .opdb_faces_array_api import ARRAY_API_FACES
from .opdb_faces_numpy import FFT_FACES, LINALG_FACES, MORE_NUMPY_FACES, OP_SWEPT, RANDOM_FACES
from .opdb_faces_scipy import MORE_SCIPY_FACES
from .opdb_faces_ufuncs import ELEMENTWISE, UFUNC_METHOD_FACES, elementwise_faces
from .opinfo import op_record

__all__ = ["DATABASE", "ROOT_ENTRIES", "namespaces", "reference", "asarrays", "same_errors"]

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
