"""Layer 1, core: the Tensor and its data (storage, views, versions), the batched tensor of vector
mode, creation functions, the array backend and pytrees. Imports nothing above it."""
