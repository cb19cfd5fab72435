# Runtime log lines: one line each, prefixed with "strato" and the level, written to stderr (stdout carries
# results). A few lines instead of the logging module, whose import would cost cold-start time.
import os
import sys

LEVELS = {"DEBUG": 10, "INFO": 20, "WARN": 30, "WARNING": 30, "ERROR": 40}
_threshold = LEVELS.get(os.environ.get("STRATO_LOG_LEVEL", "INFO").upper(), 20)


def set_level(name):
    global _threshold
    _threshold = LEVELS[name.upper()]


def enabled(level):
    return LEVELS[level] >= _threshold


def _write(level, message):
    if LEVELS[level] < _threshold:
        return
    tag = "WARN" if level == "WARNING" else level
    # Every line of a multi-line message (a traceback) keeps the prefix, so log collectors see whole lines.
    text = "".join(f"strato {tag:<5} {line}\n" for line in str(message).splitlines() or [""])
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except (OSError, ValueError):
        pass  # stderr closed: nowhere left to report


def debug(message):
    _write("DEBUG", message)


def info(message):
    _write("INFO", message)


def warn(message):
    _write("WARN", message)


def error(message):
    _write("ERROR", message)
