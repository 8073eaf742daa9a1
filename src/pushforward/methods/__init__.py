"""Layer 6, methods: the one place that binds ops, operators, indexing and NumPy protocols onto
Tensor, and fills the registries through which the lower layers reach the ops."""
