# Strato: mark Python functions with @Endpoint(...) to run them as serverless GPU/CPU endpoints.
# This module is what worker files import; the worker runtime lives in strato.runtime and strato.serverless.
# The names are those of the reference product, so that its projects run after changing only the import line.
from .catalog import (
    CPU_DATACENTERS, CpuInstanceType, CudaVersion, DataCenter, GpuGroup, GpuType, ServerlessScalerType, ServerlessType,
)
from .endpoint import Endpoint, remote
from .resources import NetworkVolume, PodTemplate

__all__ = [
    "Endpoint", "EndpointJob", "remote", "GpuGroup", "GpuType", "CpuInstanceType", "DataCenter", "CPU_DATACENTERS",
    "CudaVersion", "ServerlessScalerType", "ServerlessType", "NetworkVolume", "PodTemplate", "StratoRemoteError",
]
__version__ = "0.1.0"

# The client side loads on first use: a worker's cold start imports this module and never calls out.
_LAZY = {"EndpointJob": "._client", "StratoRemoteError": "._remote"}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module 'strato' has no attribute {name!r}")
