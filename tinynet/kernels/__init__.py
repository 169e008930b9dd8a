"""CUDA kernels and the dispatch that picks them (the only place with CUDA source)."""
