# Strato: mark Python functions with @Endpoint(...) to run them as serverless GPU/CPU endpoints.
# This module is what worker files import; the worker runtime lives in strato.runtime and strato.serverless.
from .catalog import CpuInstanceType, GpuGroup, GpuType
from .endpoint import Endpoint

__all__ = ["Endpoint", "GpuGroup", "GpuType", "CpuInstanceType"]
__version__ = "0.1.0"
