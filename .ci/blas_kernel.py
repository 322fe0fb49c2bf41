"""Print the OpenBLAS kernel numpy runs on; with an argument, fail unless it is that one."""

import sys

import numpy as np  # noqa: F401 - loads OpenBLAS so threadpoolctl can see it
from threadpoolctl import threadpool_info

kernels = [i.get("architecture") for i in threadpool_info() if i.get("internal_api") == "openblas"]
print("OpenBLAS kernel:", ", ".join(map(str, kernels)) or "none found")
if len(sys.argv) > 1 and sys.argv[1] not in kernels:
    sys.exit(f"asked for the {sys.argv[1]} kernel but OpenBLAS runs {kernels}")
