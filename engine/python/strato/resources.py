# Values users pass to Endpoint(...) besides plain data: persistent network volumes and the reference product's
# Pod templates. The analysis reads the same calls statically (engine/src/project/values.ts) with the same rules.
import re

from .catalog import ENDPOINT_NAME_PATTERN, MESSAGES, NETWORK_VOLUME, POD_TEMPLATE_FIELDS, DataCenter

__all__ = ["NetworkVolume", "PodTemplate", "datacenter_value"]

_NAME = re.compile(ENDPOINT_NAME_PATTERN)
# "eu_ro_1", "EU-RO-1", DataCenter.EU_RO_1 -> "EU-RO-1"
_DATACENTERS = {m.value.lower(): m.value for m in DataCenter}



def _json(value):
    """A value as JSON text, like the analysis shows it (json loads only on this error path)."""
    import json

    return json.dumps(value)

def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def datacenter_value(value):
    """The canonical id of one datacenter (case-insensitive, '_' for '-'), or ValueError in the catalog's words."""
    found = _DATACENTERS.get(str.__str__(value).strip().replace("_", "-").lower()) if isinstance(value, str) else None
    if found is None:
        shown = _json(str.__str__(value)) if isinstance(value, str) else repr(value)
        raise ValueError(MESSAGES["unknown-datacenter"].format(value=shown, known=", ".join(m.value for m in DataCenter)))
    return found


class NetworkVolume:
    """A persistent volume, per app and datacenter, kept across deploys and shared by every worker that mounts it.

    Workers find it at $STRATO_VOLUME_PATH (the first volume) and $STRATO_VOLUME_PATH_<NAME>. Idempotent by name:
    deploying again reuses the same volume. `size` (GB) is a quota.
    """

    def __init__(self, name=None, size=NETWORK_VOLUME["defaultSizeGb"], datacenter=NETWORK_VOLUME["defaultDatacenter"]):
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise ValueError(MESSAGES["volume-name"].format(value=_json(name)))
        low, high = NETWORK_VOLUME["minSizeGb"], NETWORK_VOLUME["maxSizeGb"]
        if not _is_int(size) or not low <= size <= high:
            raise ValueError(MESSAGES["volume-size"].format(min=low, max=high, value=_json(size) if _is_int(size) else repr(size)))
        self.name = name
        self.size = size
        self.datacenter = DataCenter(datacenter_value(datacenter))

    @property
    def env_name(self):
        """The variable that holds this volume's path in a worker: STRATO_VOLUME_PATH_<NAME>."""
        return "STRATO_VOLUME_PATH_" + re.sub(r"[^A-Za-z0-9]", "_", self.name).upper()

    def config(self):
        return {"name": self.name, "size": self.size, "datacenter": str(self.datacenter)}

    def __eq__(self, other):
        return isinstance(other, NetworkVolume) and self.config() == other.config()

    def __hash__(self):
        return hash((self.name, self.size, str(self.datacenter)))

    def __repr__(self):
        return f"NetworkVolume(name={self.name!r}, size={self.size}, datacenter=DataCenter.{self.datacenter.name})"


class PodTemplate:
    """The reference product's Pod template. Recorded in the manifest; its env sits under the endpoint's env."""

    def __init__(self, **fields):
        unknown = [k for k in fields if k not in POD_TEMPLATE_FIELDS]
        if unknown:
            raise ValueError(MESSAGES["template-type"].format(value=f"PodTemplate({unknown[0]}=...)"))
        if fields.get("env") is not None:
            fields["env"] = _template_env(fields["env"])
        self.fields = {**POD_TEMPLATE_FIELDS, **fields}
        for key, value in self.fields.items():
            setattr(self, key, value)

    def config(self):
        return dict(self.fields)

    def __repr__(self):
        return "PodTemplate(" + ", ".join(f"{k}={v!r}" for k, v in self.fields.items() if v != POD_TEMPLATE_FIELDS[k]) + ")"


def _template_env(env):
    """A Pod template's env as names to values: given so, or as the reference product writes it, a list of
    {"key": name, "value": value} (the analysis reads it by the same rule: catalog/parameterRules.ts templateEnv)."""
    if isinstance(env, (list, tuple)):
        if all(isinstance(e, dict) and sorted(e) == ["key", "value"] and isinstance(e["key"], str) for e in env):
            return {e["key"]: e["value"] for e in env}
    elif isinstance(env, dict):
        return dict(env)
    raise ValueError(MESSAGES["template-env"].format(value=repr(env)))
