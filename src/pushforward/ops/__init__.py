"""Layer 5, ops: `derivatives.yaml`, the module generated from it (`generated.py`), the
hand-written formula helpers (`formulas/`) and composite ops (`composites/`)."""
