"""Command line: python -m zshard_export SPEC -o step.mlir [...] (see --help).

Every failure is one line on stderr and exit status 1: `zshard-export: error:
...` for bad input (the user's module, function, model or paths), and
`zshard-export: internal error: ...` for anything the exporter did not expect.
`--debug` (or ZSHARD_EXPORT_DEBUG=1) re-raises instead, with the traceback.
"""

import argparse
import importlib
import importlib.util
import inspect
import os
import sys

from .errors import ExportError, describe, one_line, short_path

DEBUG_ENV = "ZSHARD_EXPORT_DEBUG"

USAGE = """zshard-export SPEC [--set KEY=VALUE ...] -o STEP.mlir [--weights W.safetensors] [--meta STEP.json] [--debug]

SPEC names a Python function, 'package.module:function' or 'path/to/file.py:function',
that returns (model, optimizer, batch, loss_fn): an nn.Module, a torch.optim.AdamW
over its parameters, a dict of example batch tensors and loss_fn(model, **batch)
-> loss (None: the model's forward returns the loss, or a tuple ending with it).
--set passes keyword arguments to that function (numbers are converted).
Errors are one line and exit status 1; --debug (or ZSHARD_EXPORT_DEBUG=1) shows
the Python traceback instead."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise ExportError(f"{message} (see --help)")


def _import_file(where):
    if not os.path.isfile(where):
        raise ExportError(f"no such file '{where}'")
    mod_spec = importlib.util.spec_from_file_location("_zshard_export_user", where)
    if mod_spec is None:
        raise ExportError(f"cannot import '{where}' as a Python module")
    module = importlib.util.module_from_spec(mod_spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(where)))
    mod_spec.loader.exec_module(module)
    return module


def _import(spec, where):
    try:
        if where.endswith(".py"):
            return _import_file(where)
        return importlib.import_module(where)
    except ExportError:
        raise
    except SyntaxError as e:
        raise ExportError(f"cannot import '{where}': {type(e).__name__}: {e.msg} at "
                          f"{short_path(e.filename or where)}:{e.lineno}") from e
    except ModuleNotFoundError as e:
        if e.name and (where == e.name or where.startswith(e.name + ".")):
            raise ExportError(f"no module named '{e.name}' (SPEC '{spec}': MODULE must be "
                              f"importable from the Python path; a file is "
                              f"FILE.py:FUNCTION)") from e
        raise ExportError(f"cannot import '{where}': {describe(e)}") from e
    except Exception as e:  # noqa: BLE001 - whatever the user's module raises
        raise ExportError(f"cannot import '{where}': {describe(e)}") from e


def _load(spec):
    if ":" not in spec:
        raise ExportError(f"SPEC '{spec}' must be MODULE:FUNCTION or FILE.py:FUNCTION")
    where, name = spec.rsplit(":", 1)
    module = _import(spec, where)
    fn = getattr(module, name, None)
    if fn is None or not callable(fn):
        raise ExportError(f"'{where}' has no function '{name}'")
    return fn


def _check_kwargs(fn, kwargs):
    """Refuses --set keys the function does not take, and missing parameters."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return
    ps = sig.parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in ps):
        return
    named = [p.name for p in ps if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    for key in kwargs:
        if key not in named:
            takes = ", ".join(named) if named else "no parameters"
            raise ExportError(f"--set {key}: {fn.__name__}() has no parameter '{key}' "
                              f"(it takes: {takes})")
    missing = [p.name for p in ps if p.default is p.empty and p.name not in kwargs
               and p.kind is not p.VAR_POSITIONAL]
    if missing:
        raise ExportError(f"{fn.__name__}() needs {', '.join(missing)}: pass "
                          f"--set {missing[0]}=VALUE")


def _make(spec, kwargs):
    fn = _load(spec)
    _check_kwargs(fn, kwargs)
    try:
        made = fn(**kwargs)
    except ExportError:
        raise
    except Exception as e:  # noqa: BLE001 - whatever the user's function raises
        raise ExportError(f"{spec} raised {describe(e)}") from e
    if isinstance(made, dict):
        missing = [k for k in ("model", "optimizer", "batch") if k not in made]
        if not missing:
            return made["model"], made["optimizer"], made["batch"], made.get("loss_fn")
    elif isinstance(made, (tuple, list)) and len(made) == 4:
        return tuple(made)
    raise ExportError(f"{spec} returned {_kind(made)}; it must return (model, optimizer, "
                      f"batch, loss_fn) or a dict with model, optimizer, batch and loss_fn")


def _kind(x):
    if isinstance(x, (tuple, list)):
        return f"a {type(x).__name__} of {len(x)}"
    if isinstance(x, dict):
        return f"a dict of {', '.join(map(str, x)) or 'nothing'}"
    return type(x).__name__


def _value(text):
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def _check_output(flag, path):
    """Refuses an output path that cannot be written, before any work."""
    if os.path.isdir(path):
        raise ExportError(f"{flag} '{path}' is a directory")
    parent = os.path.dirname(path) or "."
    if not os.path.isdir(parent):
        raise ExportError(f"{flag} '{path}': no such directory '{parent}'")
    if not os.access(parent, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise ExportError(f"{flag} '{path}': permission denied")


def _write(result, paths):
    """Writes the outputs; on failure removes the ones this call created."""
    fresh = [p for p in paths if p and not os.path.exists(p)]
    try:
        result.write(*paths)
    except OSError as e:
        for p in fresh:
            if os.path.isfile(p):
                os.unlink(p)
        raise ExportError(f"cannot write '{e.filename}': {e.strerror}") from e


def _run(argv):
    p = _Parser(prog="zshard-export", usage=USAGE)
    p.add_argument("spec")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("-o", "--output", required=True, help="the step, contract IR")
    p.add_argument("--weights", help="the module's current parameters, safetensors "
                   "(zshard-run --init-from)")
    p.add_argument("--meta", help="a JSON summary: lr, parameters, batch shapes, aten ops")
    p.add_argument("--debug", action="store_true",
                   help=f"on an error, raise it with its Python traceback (also {DEBUG_ENV}=1)")
    args = p.parse_args(argv)
    kwargs = {}
    for item in args.set:
        if "=" not in item:
            raise ExportError(f"--set '{item}' is not KEY=VALUE")
        k, v = item.split("=", 1)
        kwargs[k] = _value(v)
    for flag, path in (("-o", args.output), ("--weights", args.weights),
                       ("--meta", args.meta)):
        if path is not None:
            _check_output(flag, path)

    try:
        from .export import export_step
    except ImportError as e:
        raise ExportError(f"cannot import torch ({type(e).__name__}: {one_line(e)}); the "
                          f"exporter runs in the venv scripts/setup-torch.sh makes") from e
    model, opt, batch, loss_fn = _make(args.spec, kwargs)
    result = export_step(model, opt, batch, loss_fn)
    _write(result, (args.output, args.weights, args.meta))
    n = len(result.weights)
    print(f"zshard-export: {args.output}: {n} parameters "
          f"({result.meta['param_count']} elements), lr {result.meta['lr']:g}, "
          f"{len(result.meta['ops'])} distinct aten ops", file=sys.stderr)
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    debug = "--debug" in argv or os.environ.get(DEBUG_ENV, "") not in ("", "0")
    try:
        return _run(argv)
    except ExportError as e:
        if debug:
            raise
        lines = [line.strip() for line in str(e).splitlines() if line.strip()]
        print(f"zshard-export: error: {' '.join(lines)}", file=sys.stderr)
    except KeyboardInterrupt:
        print("zshard-export: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # noqa: BLE001 - one line instead of a traceback
        if debug:
            raise
        print(f"zshard-export: internal error: {type(e).__name__}: {one_line(e)} "
              f"(please report)", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
