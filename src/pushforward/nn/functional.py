"""torch.nn.functional's functions over pushforward tensors: names, signatures and defaults as in
torch. Every function is differentiable in both modes (they are declared in derivatives.yaml
with `namespace: nn.functional`, built from differentiable ops; conv and pooling on the
`_im2col` / `_col2im` ops).

>>> import pushforward as pf
>>> import pushforward.nn.functional as F
>>> F.relu(pf.tensor([-1.0, 2.0]))
tensor([0., 2.])
"""

from __future__ import annotations

from ..ops import generated as _ops
from ..core.namespace import public_dir as _public_dir

globals().update(_ops.NAMESPACES["nn.functional"])

# ops that torch also has at the top level: the same functions as pf.<name>
relu = _ops.relu
relu_ = _ops.relu_
sigmoid = _ops.sigmoid
tanh = _ops.tanh
softmax = _ops.softmax
log_softmax = _ops.log_softmax

__all__ = sorted(
    list(_ops.NAMESPACES["nn.functional"]) + ["relu", "relu_", "sigmoid", "tanh", "softmax", "log_softmax"]
)


__dir__ = _public_dir(globals())
