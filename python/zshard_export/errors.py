"""The exporter's one error type, and how it describes a user's exception."""

import os
import traceback


class ExportError(Exception):
    """A model, loss or optimizer the exporter cannot turn into a contract step.

    The message says what and where (the aten op and the module path, the
    parameter or buffer name), so the user can change the model.
    """


# Frames in these directories are torch's or the exporter's, not the user's;
# the exporter's own examples count as user code.
_NOT_USER = ("/torch/", "/functorch/", "/zshard_export/", "<frozen ")
_USER_ANYWAY = ("/zshard_export/examples/",)


def is_user_file(filename):
    """True for a file of the user's (not torch, not the exporter itself)."""
    f = filename.replace("\\", "/")
    if any(k in f for k in _USER_ANYWAY):
        return True
    return not any(k in f for k in _NOT_USER)


def user_frame(frames):
    """`file:line: code` of the innermost user frame of `frames` (a
    traceback.StackSummary, innermost last), or None."""
    best = None
    for fs in frames:
        if is_user_file(fs.filename):
            best = fs
    if best is None:
        return None
    where = f"{short_path(best.filename)}:{best.lineno}"
    return f"{where}: {best.line.strip()}" if best.line and best.line.strip() else where


def exc_frame(exc):
    """user_frame of an exception's traceback."""
    return user_frame(traceback.extract_tb(exc.__traceback__))


def one_line(text):
    """The first non-empty line of a message (exception texts of torch run to
    many lines; the exporter prints one)."""
    for line in str(text).splitlines():
        if line.strip():
            return line.strip()
    return ""


def describe(exc):
    """`Type: message at file:line: code` for an exception raised in user code
    (or by torch on the user's behalf), without the traceback."""
    kind = type(exc).__name__
    msg = one_line(exc)
    text = f"{kind}: {msg}" if msg else kind
    frame = exc_frame(exc)
    return f"{text} at {frame}" if frame else text


def short_path(path):
    """The path relative to the working directory when it is inside it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel
