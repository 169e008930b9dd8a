"""tinynet's CUDA kernels: the ``.cu`` sources, their launchers (``gpu_ops``, ``elementwise``,
``optim_update``, ``attention``) and the cuDNN Frontend calls (``cudnn``). The only place with
CUDA source.

Nothing here chooses an implementation: each op in :mod:`tinynet.ops` picks its own path.
"""
