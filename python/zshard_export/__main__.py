"""Command line: python -m zshard_export SPEC -o step.mlir [...] (see --help)."""

import argparse
import importlib
import importlib.util
import os
import sys

USAGE = """zshard-export SPEC [--set KEY=VALUE ...] -o STEP.mlir [--weights W.safetensors] [--meta STEP.json]

SPEC names a Python function, 'package.module:function' or 'path/to/file.py:function',
that returns (model, optimizer, batch, loss_fn): an nn.Module, a torch.optim.AdamW
over its parameters, a dict of example batch tensors and loss_fn(model, **batch)
-> loss (None: the model's forward returns the loss, or a tuple ending with it).
--set passes keyword arguments to that function (numbers are converted)."""


def _load(spec):
    if ":" not in spec:
        raise SystemExit(f"zshard-export: error: SPEC '{spec}' must be MODULE:FUNCTION or "
                         f"FILE.py:FUNCTION")
    where, name = spec.rsplit(":", 1)
    if where.endswith(".py"):
        if not os.path.isfile(where):
            raise SystemExit(f"zshard-export: error: no such file '{where}'")
        mod_spec = importlib.util.spec_from_file_location("_zshard_export_user", where)
        module = importlib.util.module_from_spec(mod_spec)
        sys.path.insert(0, os.path.dirname(os.path.abspath(where)))
        mod_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(where)
    fn = getattr(module, name, None)
    if fn is None or not callable(fn):
        raise SystemExit(f"zshard-export: error: '{where}' has no function '{name}'")
    return fn


def _value(text):
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def main(argv=None):
    p = argparse.ArgumentParser(prog="zshard-export", usage=USAGE)
    p.add_argument("spec")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("-o", "--output", required=True, help="the step, contract IR")
    p.add_argument("--weights", help="the module's current parameters, safetensors "
                   "(zshard-run --init-from)")
    p.add_argument("--meta", help="a JSON summary: lr, parameters, batch shapes, aten ops")
    args = p.parse_args(argv)
    kwargs = {}
    for item in args.set:
        if "=" not in item:
            raise SystemExit(f"zshard-export: error: --set '{item}' is not KEY=VALUE")
        k, v = item.split("=", 1)
        kwargs[k] = _value(v)

    from . import ExportError, export_step
    try:
        made = _load(args.spec)(**kwargs)
        if isinstance(made, dict):
            model, opt, batch, loss_fn = (made["model"], made["optimizer"], made["batch"],
                                          made.get("loss_fn"))
        else:
            model, opt, batch, loss_fn = made
        result = export_step(model, opt, batch, loss_fn)
        result.write(args.output, args.weights, args.meta)
    except ExportError as e:
        print(f"zshard-export: error: {e}", file=sys.stderr)
        return 1
    n = len(result.weights)
    print(f"zshard-export: {args.output}: {n} parameters "
          f"({result.meta['param_count']} elements), lr {result.meta['lr']:g}, "
          f"{len(result.meta['ops'])} distinct aten ops", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
