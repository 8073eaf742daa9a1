"""Layer 6, methods: the one place that binds ops, operators, indexing and the tensor's own methods
onto Tensor (and NumPy's protocols, whose handlers the NumPy face above hands over), and fills the
registries through which the lower layers reach the ops."""
