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
_LAZY = {"EndpointJob": "._client", "StratoRemoteError": "._wire"}


# Submodules a script reaches as attributes (`import strato; strato.serverless.start(...)`, as the reference's
# `runpod.serverless.start`), imported on first use.
_SUBMODULES = ("serverless", "runtime")


def __getattr__(name):
    import importlib

    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'strato' has no attribute {name!r}")
