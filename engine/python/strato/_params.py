# The checks of @Endpoint's parameters, run when a worker module is imported: each turns a value as users write it
# (enum members, strings in any case, tuples) into the configuration's plain value, or raises ValueError in the
# words of catalog.json (the analysis and the platform say the same).
import re

from .catalog import (
    CPU_DATACENTERS, DEBIAN_PACKAGE_PATTERN, ENDPOINT_NAME_PATTERN, ENV_TOTAL_BYTES, ENV_VALUE_BYTES, GPU_GROUP_OF,
    GPU_SHORT_NAMES, IMAGE_REF_PATTERN, MESSAGES, PARAMETER_BOUNDS, PARAMETER_DEFAULTS, WORKERS_MAX_UPPER_BOUND,
    CpuInstanceType, CudaVersion, DataCenter, GpuGroup, GpuType, ServerlessScalerType,
)
from .resources import NetworkVolume, PodTemplate, datacenter_value

_NAME = re.compile(ENDPOINT_NAME_PATTERN)

# Lower-cased spelling -> canonical value, so that gpu="ada_24" or "nvidia h200" is accepted too.
_GPU_VALUES = {m.value.lower(): m.value for enum in (GpuGroup, GpuType) for m in enum}
_CPU_VALUES = {m.value.lower(): m.value for m in CpuInstanceType}
_CUDA_VERSIONS = [m.value for m in CudaVersion]
_SCALER_TYPES = [m.value for m in ServerlessScalerType]
_KNOWN_DATACENTERS = [m.value for m in DataCenter]



def _json(value):
    """A value as JSON text, like the analysis shows it (json loads only on this error path)."""
    import json

    return json.dumps(value)

def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _rule(key, **values):
    """A rule message in the words of catalog.json, shared with the analysis and the platform."""
    return MESSAGES[key].format(**values)


def _int_in_bounds(param, value):
    low, high = PARAMETER_BOUNDS[param]
    if not _is_int(value):
        raise ValueError(_rule("int-type", param=param, min=low, max=high, value=repr(value)))
    if not low <= value <= high:
        key = f"{param}-range" if f"{param}-range" in MESSAGES else "int-range"
        raise ValueError(_rule(key, param=param, min=low, max=high, value=value))
    return value


def _check_name(name):
    if not isinstance(name, str):
        raise ValueError(f"endpoint name must be a string, got: {name!r}")
    if not _NAME.fullmatch(name):
        raise ValueError(_rule("invalid-name", value=repr(name)))
    return name


def _gpu_list(gpu):
    items = list(gpu) if isinstance(gpu, (list, tuple)) else [gpu]
    if not items:
        raise ValueError("gpu list is empty: name at least one GpuGroup or GpuType, or omit gpu for any GPU")
    values = []
    for item in items:
        if not isinstance(item, str):
            raise ValueError(f"gpu must be a GpuGroup, a GpuType, a string or a list of them, got: {item!r}")
        value = _GPU_VALUES.get(str.__str__(item).lower())
        if value is None:
            raise ValueError(_unknown_gpu(str.__str__(item)))
        values.append(value)
    return values


def _unknown_gpu(name):
    """The analysis's words for a GPU name the catalog lacks; a short model name ("H100") names its models."""
    meant = GPU_SHORT_NAMES.get(name.strip().lower(), ())
    if len(meant) == 1:
        return _rule("unknown-gpu-guess", value=_json(name), guess=_json(meant[0]))
    if meant:
        groups = {GPU_GROUP_OF[m] for m in meant}
        key = "unknown-gpu-group" if len(groups) == 1 else "unknown-gpu-models"
        return _rule(key, value=_json(name), models=", ".join(_json(m) for m in meant), group=next(iter(groups)))
    return _rule("unknown-gpu", value=_json(name), groups=", ".join(g.value for g in GpuGroup))


def _cpu_value(cpu):
    value = _CPU_VALUES.get(str.__str__(cpu).lower()) if isinstance(cpu, str) else None
    if value is None:
        raise ValueError(
            f"unknown cpu instance type {cpu!r}: use a CpuInstanceType such as CpuInstanceType.CPU3C_2_4 ('cpu3c-2-4')"
        )
    return value


def _workers_pair(workers):
    if workers is None:
        return PARAMETER_DEFAULTS["workers"]
    if _is_int(workers):
        pair = (0, workers)
    elif isinstance(workers, (tuple, list)) and len(workers) == 2 and all(_is_int(w) for w in workers):
        pair = (workers[0], workers[1])
    else:
        raise ValueError(_rule("workers-shape", value=repr(workers)))
    low, high = pair
    if low < 0 or high < 0:
        raise ValueError(_rule("workers-negative", min=low, max=high))
    if low > high:
        raise ValueError(_rule("workers-order", min=low, max=high))
    if high == 0:
        raise ValueError(_rule("workers-empty"))
    if high > WORKERS_MAX_UPPER_BOUND:
        raise ValueError(_rule("workers-upper", max=high, limit=WORKERS_MAX_UPPER_BOUND))
    return pair


def _dependencies(deps):
    if deps is None:
        return []
    if not isinstance(deps, (list, tuple)) or not all(isinstance(d, str) and d.strip() for d in deps):
        raise ValueError(f"dependencies must be a list of package names (non-empty strings), got: {deps!r}")
    return list(deps)


def _env(env):
    if env is None:
        return {}
    if not isinstance(env, dict):
        raise ValueError(f"env must be a dict of str to str, got: {env!r}")
    total = 0
    for key, value in env.items():
        if not isinstance(key, str):
            raise ValueError(f"env keys must be non-empty strings, got: {key!r}")
        if not key or "=" in key or "\0" in key:
            raise ValueError(_rule("env-name", name=_json(key)))
        if not isinstance(value, str):
            raise ValueError(f"env value of {key!r} must be a str, got: {value!r}")
        if "\0" in value:
            raise ValueError(_rule("env-value", name=_json(key)))
        size = len(value.encode("utf-8", "surrogatepass"))
        if size > ENV_VALUE_BYTES:
            raise ValueError(_rule("env-value-size", name=_json(key), bytes=size, limit=ENV_VALUE_BYTES))
        total += len(key.encode("utf-8", "surrogatepass")) + size + 2
    if total > ENV_TOTAL_BYTES:
        raise ValueError(_rule("env-total-size", bytes=total, limit=ENV_TOTAL_BYTES))
    return dict(env)


def _bool(param, value):
    if not isinstance(value, bool):
        raise ValueError(_rule("bool-type", param=param, value=repr(value)))
    return value


def _datacenters(value):
    if value is None:
        return None
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    if not items:
        raise ValueError(_rule("unknown-datacenter", value=repr(value), known=", ".join(_KNOWN_DATACENTERS)))
    out = []
    for item in items:
        dc = datacenter_value(item)
        if dc not in out:
            out.append(dc)
    return out


def _volumes(value):
    if value is None:
        return []
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    seen = set()
    for item in items:
        if not isinstance(item, NetworkVolume):
            raise ValueError(_rule("volume-type", value=repr(value)))
        if item.name in seen:
            raise ValueError(_rule("volume-duplicate", value=_json(item.name)))
        seen.add(item.name)
    return items


def _placement(cpu, datacenters, volumes):
    """Where the workers may run (service.md item 11: a volume fixes the region); the rules of
    engine/src/catalog/parameterRules.ts resolvePlacement, in the same words. None means anywhere."""
    shown = lambda dcs: dcs[0] if len(dcs) == 1 else "[" + ", ".join(dcs) + "]"  # noqa: E731
    volume_dcs = list(dict.fromkeys(str(v.datacenter) for v in volumes))
    if len(volume_dcs) > 1:
        raise ValueError(_rule("volume-datacenters-differ", datacenters=", ".join(volume_dcs)))
    allowed = datacenters
    if volume_dcs:
        dc = volume_dcs[0]
        if allowed is not None and dc not in allowed:
            volume = next(v for v in volumes if str(v.datacenter) == dc)
            raise ValueError(_rule("volume-outside-datacenter", volume=_json(volume.name), volume_datacenter=dc,
                                   datacenters=shown(allowed)))
        allowed = [dc]
    if cpu:
        cpu_dcs = [str(d) for d in CPU_DATACENTERS]
        within = [d for d in (allowed if allowed is not None else cpu_dcs) if d in cpu_dcs]
        if not within:
            raise ValueError(_rule("cpu-datacenter", cpu_datacenters=", ".join(cpu_dcs), datacenters=shown(allowed or [])))
        allowed = within
    return allowed


def _cuda_version(value):
    text = f"{value:.1f}" if isinstance(value, float) else str.__str__(value).strip() if isinstance(value, str) else ""
    if text not in _CUDA_VERSIONS:
        raise ValueError(_rule("unknown-cuda-version", value=repr(value), known=", ".join(_CUDA_VERSIONS)))
    return text


def _scaler_type(value):
    if value is None:
        return None
    text = str.__str__(value).strip().upper() if isinstance(value, str) else ""
    if text not in _SCALER_TYPES:
        raise ValueError(_rule("unknown-scaler-type", value=repr(value)))
    return text


def _system_dependencies(value):
    if value is None:
        return []
    if not isinstance(value, (list, tuple)) or not all(isinstance(d, str) and re.match(DEBIAN_PACKAGE_PATTERN, d.strip()) for d in value):
        raise ValueError(_rule("system-dependency", value=repr(value)))
    return [d.strip() for d in value]


def _image(value):
    if value is None:
        return None
    if not isinstance(value, str) or not re.match(IMAGE_REF_PATTERN, value.strip()):
        raise ValueError(_rule("image-ref", value=repr(value)))
    return value.strip()


def _template(value):
    if value is None:
        return None
    if not isinstance(value, PodTemplate):
        raise ValueError(_rule("template-type", value=repr(value)))
    return value
