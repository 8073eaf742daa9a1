"""Layer 4, dispatch: how one op call runs. The op record (oprecord), the generated ops' fast paths (bare),
the classifier and its array executors (classifier), the general executor (general), in-place
writes, the batching rules of vector mode and the interpreters of other kinds of tensor (interpret)."""
