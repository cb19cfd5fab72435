# The checks of int, float, bool and str annotations by pydantic's lax rules ("3" is 3 for an int, 3 is not a str),
# for a worker whose code does not use pydantic (_routeargs.py). A value one refuses raises Invalid with its error
# as pydantic words it: {"type", "loc", "msg", "input"}.


class Invalid(Exception):
    def __init__(self, errors):
        super().__init__(errors)
        self.errors = errors  # pydantic's error dicts, loc within the value


def _refuse(kind, message, value):
    raise Invalid([{"type": kind, "loc": (), "msg": message, "input": value}])


_BOOL_TEXT = {"0": False, "off": False, "f": False, "false": False, "n": False, "no": False,
              "1": True, "on": True, "t": True, "true": True, "y": True, "yes": True}


def _lax_int(value):
    if type(value) is int or type(value) is bool:
        return int(value)
    if type(value) is float:
        if value != value or value in (float("inf"), float("-inf")):
            _refuse("finite_number", "Input should be a finite number", value)
        if not value.is_integer():
            _refuse("int_from_float", "Input should be a valid integer, got a number with a fractional part", value)
        return int(value)
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text)
        except ValueError:
            try:
                number = float(text)
            except ValueError:
                number = None
            if number is not None and number.is_integer():
                return int(number)
        _refuse("int_parsing", "Input should be a valid integer, unable to parse string as an integer", value)
    _refuse("int_type", "Input should be a valid integer", value)


def _lax_float(value):
    if type(value) in (int, float, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            _refuse("float_parsing", "Input should be a valid number, unable to parse string as a number", value)
    _refuse("float_type", "Input should be a valid number", value)


def _lax_bool(value):
    if type(value) is bool:
        return value
    if type(value) in (int, float) and value in (0, 1):
        return value == 1
    if isinstance(value, str) and value.strip().lower() in _BOOL_TEXT:
        return _BOOL_TEXT[value.strip().lower()]
    if type(value) in (int, float, str):
        _refuse("bool_parsing", "Input should be a valid boolean, unable to interpret input", value)
    _refuse("bool_type", "Input should be a valid boolean", value)


def _lax_str(value):
    if isinstance(value, str):
        return value
    _refuse("string_type", "Input should be a valid string", value)


LAX = {"int": _lax_int, "float": _lax_float, "bool": _lax_bool, "str": _lax_str}
