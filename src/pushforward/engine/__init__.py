"""Layer 3, engine: the machinery of both modes. Dual levels and the tangent store, deferred
tangents, the per-output rules (outputs), the tape and its backward walk, gradient accumulation,
grad mode."""
