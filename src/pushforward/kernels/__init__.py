"""Layer 2, kernels: NumPy/SciPy kernels with torch-style signatures. Arrays in, arrays out."""
