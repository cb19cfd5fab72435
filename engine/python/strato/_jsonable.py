# The JSON form of a Python value as FastAPI renders it (its jsonable_encoder): what a load-balanced route answers
# and what a script sends as a call's arguments. Pydantic models (v2 and v1), datetimes, UUIDs, Decimals, Enums, sets,
# dataclasses and the like, nested anywhere. Nothing is imported to recognise a type (no pydantic, no datetime): a
# value's class is known by the module and name of its classes, so a worker whose code never loaded pydantic never
# loads it here.
import json

from ._invoke import output_json


def _iso(value):
    return value.isoformat()


def _decimal(value):
    # As FastAPI: a whole Decimal is an integer (exact), any other a float.
    if value.is_finite() and value.as_tuple().exponent >= 0:
        return int(value)
    return float(value)  # NaN and the infinities are then refused as JSON cannot hold them


def _model(value):
    dump = getattr(value, "model_dump", None)
    if dump is not None:  # pydantic v2: the model's own JSON mode, aliases as FastAPI answers them
        return dump(mode="json", by_alias=True)
    return value.dict(by_alias=True)  # pydantic v1 (and pydantic.v1): nested values go on through this encoder


def _collection(value):
    try:
        return sorted(value)  # as queue outputs are (_invoke.json_default): a typed client reads set[T] in order
    except TypeError:  # items of kinds that do not compare
        return list(value)


def _bytes(value):
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable: bytes have no JSON form; send "
                    "text (value.decode()) or base64 text (base64.b64encode(value).decode())")


# (module, class name) of a class in the value's class's MRO -> the function giving the value's JSON form.
_BY_NAME = {
    ("datetime", "datetime"): _iso,
    ("datetime", "date"): _iso,
    ("datetime", "time"): _iso,
    ("datetime", "timedelta"): lambda value: value.total_seconds(),
    ("uuid", "UUID"): str,
    ("decimal", "Decimal"): _decimal,
    ("enum", "Enum"): lambda value: value.value,
    ("pathlib", "PurePath"): str,
    ("ipaddress", "_IPAddressBase"): str,
    ("collections", "deque"): list,
    ("re", "Pattern"): lambda value: value.pattern,
    ("builtins", "set"): _collection,
    ("builtins", "frozenset"): _collection,
    ("builtins", "bytes"): _bytes,
    ("builtins", "bytearray"): _bytes,
    ("builtins", "memoryview"): _bytes,
    ("pydantic.main", "BaseModel"): _model,
    ("pydantic.v1.main", "BaseModel"): _model,
    ("pydantic.networks", "_BaseUrl"): str,
    ("pydantic.networks", "_BaseMultiHostUrl"): str,
    ("pydantic_core._pydantic_core", "Url"): str,
    ("pydantic_core._pydantic_core", "MultiHostUrl"): str,
    ("pydantic.types", "_SecretBase"): str,  # "**********", as FastAPI answers it
}
_forms = {}  # class -> its function from _BY_NAME (or _dataclass, or None), found once per class


def _dataclass(value):
    # Its fields, not ClassVar and InitVar pseudo-fields (__dataclass_fields__ holds those too: an InitVar is no
    # attribute at all). The module is loaded already: the value's class was made by it.
    import dataclasses

    return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}


def _form_of(cls):
    form = _forms.get(cls, False)
    if form is False:
        form = None
        if hasattr(cls, "__dataclass_fields__"):
            form = _dataclass
        else:
            for klass in getattr(cls, "__mro__", ()):
                form = _BY_NAME.get((getattr(klass, "__module__", None), getattr(klass, "__qualname__", None)))
                if form is not None:
                    break
        _forms[cls] = form
    return form


def json_form(value):
    """json.dumps(default=...): the JSON form of a value json cannot encode by itself (the encoder goes on into what
    it returns); a value with none raises TypeError saying what JSON can hold."""
    form = _form_of(type(value))
    if form is None:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable: send or return a dict, a list, "
                        "text, a number, a bool, None, a pydantic model, a dataclass, a datetime, a UUID, a Decimal or an "
                        "Enum (or a container of those)")
    return form(value)


# The value as compact JSON text, non-ASCII kept, every value json_form knows in its JSON form: the encoder of job
# outputs, whose default is json_form (_invoke.json_default). What JSON cannot hold raises TypeError or ValueError.
dumps = output_json


def text_form(value):
    """A value as the text of a query parameter or path segment: text as it is, anything else as its JSON form, whose
    quotes are dropped when that form is text (a UUID, a datetime, an Enum of strings: 2024-05-01, not "2024-05-01")."""
    if isinstance(value, str):
        return value
    text = dumps(value)
    if text.startswith('"'):
        return json.loads(text)
    return text
