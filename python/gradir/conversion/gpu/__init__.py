"""The NVIDIA GPU back end: linalg -> kernels -> NVVM (``nvvm``), its passes
(``gpu-*``, one per file) and the helpers they share (``common``, ``resident``)."""
