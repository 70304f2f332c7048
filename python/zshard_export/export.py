"""nn.Module + loss + torch.optim.AdamW -> one training step as contract IR."""

import json
import math
import re
from dataclasses import dataclass, field

import torch

from .constants import (fold_buffer, folded_buffers, is_buffer_argument,
                        persistent_buffer_error)
from .errors import ExportError
from .lower import Lowering
from .mlir import DTYPES, Function, Val
from .state_dict import ATTR as STATE_DICT_ATTR, attribute_text, state_dict_layout
from .trace import trace_joint

_NAME = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*|[0-9]+)(\.([A-Za-z_][A-Za-z0-9_]*|[0-9]+))*$")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")



def _role(name):
    """The contract's typed role attribute (docs/contract.md, "Roles")."""
    return Typed(f"#zshard.role<{name}>")


def _init(spec):
    """The contract's typed init attribute for an init spec."""
    return Typed(f"#zshard.init<{spec}>")


# The contract's role of non-trained state (docs/contract.md, "Roles").
ROLE_BUFFER = "buffer"


@dataclass
class AdamWGroup:
    lr: float
    beta1: float
    beta2: float
    eps: float
    weight_decay: float


@dataclass
class ExportResult:
    """What export_step produces: the IR text, the weights and a summary."""

    mlir: str
    weights: dict  # name -> float32 numpy array, in parameter order
    meta: dict = field(default_factory=dict)

    def write(self, mlir_path, weights_path=None, meta_path=None):
        with open(mlir_path, "w") as f:
            f.write(self.mlir)
        if weights_path:
            from zshard_ref import safetensors_io
            safetensors_io.save_file(weights_path, self.weights,
                                     metadata={"producer": "zshard-export"})
        if meta_path:
            with open(meta_path, "w") as f:
                json.dump(self.meta, f, indent=1)
                f.write("\n")


def default_loss_fn(model, **batch):
    return model(**batch)


def export_step(model, optimizer, batch, loss_fn=None):
    """Exports one training step of `model` under `optimizer` as contract IR.

    model: an nn.Module. Its persistent float32 buffers become buffer
      arguments; its other buffers are folded to constants (constants.py).
    optimizer: a torch.optim.AdamW over exactly the model's parameters, with
      no state yet (the step's first update is AdamW's step 1).
    batch: {name: example tensor}; the step takes tensors of these shapes and
      dtypes (f32, or integers, which the step takes as i32).
    loss_fn: loss_fn(model, **batch) -> the scalar f32 loss (or a tuple whose
      last element is); default model(**batch).
    """
    if not isinstance(model, torch.nn.Module):
        raise ExportError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    if loss_fn is not None and not callable(loss_fn):
        raise ExportError(f"loss_fn must be callable or None, got {type(loss_fn).__name__}")
    loss_fn = loss_fn or default_loss_fn
    params = _check_params(model)
    buffers, persistent = folded_buffers(model)
    # Persistent float buffers become buffer arguments; the others fold.
    state_buffers = {n: buffers[n] for n in buffers
                     if n in persistent and is_buffer_argument(buffers[n])}
    for n in state_buffers:
        if not _NAME.match(n):
            raise ExportError(f"buffer name '{n}' is not a dotted path of identifiers")
    layout = state_dict_layout(model, params,
                               {n: buffers[n] for n in persistent if n not in state_buffers},
                               state_buffers)
    groups = _check_optimizer(optimizer, params)
    batch = _check_batch(batch)

    was_training = model.training
    try:
        gm = trace_joint(model, params, batch, loss_fn, buffers)
    except ExportError as exc:
        names_in = list(params) + list(buffers)
        for index, op in getattr(exc, "mutated", ()):
            if index < len(names_in) and names_in[index] in persistent:
                raise persistent_buffer_error(model, names_in[index], op) from None
        raise
    model.train(was_training)

    fn = Function()
    names = list(params)
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(names) + len(buffers) + len(batch):
        raise ExportError("internal: unexpected placeholders in the traced graph")
    n_params = len(names)
    arg_specs, env = [], {}
    for ph, (bname, buf) in zip(placeholders[n_params:], buffers.items()):
        if bname not in state_buffers:
            env[ph] = fold_buffer(fn, bname, buf)
    for i, name in enumerate(names):
        p = params[name]
        arg = Val(f"%arg{len(arg_specs)}", p.shape, DTYPES[p.dtype])
        arg_specs.append((arg, {"zshard.role": _role("param"), "zshard.name": name,
                                "zshard.init": _init(_init_spec(p))}))
        env[placeholders[i]] = arg
    for ph, (bname, buf) in zip(placeholders[n_params:], buffers.items()):
        if bname in state_buffers:
            arg = Val(f"%arg{len(arg_specs)}", tuple(buf.shape), "f32")
            arg_specs.append((arg, {"zshard.role": _role(ROLE_BUFFER), "zshard.name": bname,
                                    "zshard.init": _init(_init_spec(buf)),
                                    "zshard.persistent": Typed("true")}))
            env[ph] = arg
    states = {}
    for slot in ("exp_avg", "exp_avg_sq"):
        for name in names:
            p = params[name]
            arg = Val(f"%arg{len(arg_specs)}", p.shape, "f32")
            arg_specs.append((arg, {"zshard.role": _role("opt_state"), "zshard.name": f"{name}.{slot}",
                                    "zshard.param": name, "zshard.init": _init("zeros")}))
            states[(name, slot)] = arg
    batch_args = []
    for j, (bname, t) in enumerate(batch.items()):
        dt = DTYPES[t.dtype]
        sig_dt = "i32" if dt in ("i64", "i32", "i16", "i8") else dt
        arg = Val(f"%arg{len(arg_specs)}", t.shape, sig_dt)
        arg_specs.append((arg, {"zshard.role": _role("batch"), "zshard.name": bname}))
        batch_args.append((placeholders[n_params + len(buffers) + j], arg, dt))
    lr = Val(f"%arg{len(arg_specs)}", (), "f32")
    # The optimizer's lr as the hyper's default: zshard-compile copies it to
    # the manifest and zshard-run uses it unless --lr is given.
    arg_specs.append((lr, {"zshard.role": _role("hyper"), "zshard.name": "lr",
                           "zshard.default": Typed(f"{_f64(groups[names[0]].lr)} : f64")}))
    step = Val(f"%arg{len(arg_specs)}", (), "f32")
    arg_specs.append((step, {"zshard.role": _role("hyper"), "zshard.name": "step"}))

    for ph, arg, dt in batch_args:
        if dt != arg.dt:  # widen the i32 batch to the traced integer type
            r = len(arg.shape)
            ident = [(i, 1, 0) for i in range(r)]
            init = fn.empty(arg.shape, dt, "")
            arg = fn.generic("", r, ["parallel"] * r, [(arg, ident)], [(init, ident)],
                             lambda b, ins, outs, a=arg, d=dt: [b.cast(ins[0], a.dt, d)])[0]
        env[ph] = arg

    out_node = [n for n in gm.graph.nodes if n.op == "output"][0]
    flat_out = torch.utils._pytree.tree_leaves(out_node.args[0])
    loss_node, grad_nodes = flat_out[0], flat_out[1:]
    if len(grad_nodes) != n_params:
        raise ExportError("internal: the traced graph does not return one gradient per parameter")
    lowering = Lowering(gm, fn, env)
    env = lowering.run([loss_node] + [g for g in grad_nodes if g is not None])
    loss = lowering.mat(env[loss_node])
    if loss.shape != () or loss.dt != "f32":
        raise ExportError("the loss is not a 0-d f32 tensor")

    grads = {}
    for name, g in zip(names, grad_nodes):
        p = params[name]
        if g is None:  # the loss does not depend on this parameter
            grads[name] = fn.filled(tuple(p.shape), "f32", 0.0, _owner(name))
        else:
            lowering.node = None
            grads[name] = lowering.mat(env[g])

    updates = _emit_adamw(fn, names, params, groups, grads, states, lr, step)

    results = [(loss, {"zshard.role": _role("loss")})]
    for name in names:
        results.append((updates[name][0], {"zshard.role": _role("param_out"), "zshard.name": name}))
    for k, slot in enumerate(("exp_avg", "exp_avg_sq")):
        for name in names:
            results.append((updates[name][1 + k],
                            {"zshard.role": _role("opt_state_out"), "zshard.name": f"{name}.{slot}"}))

    text = _module_text(fn, arg_specs, results, module_classes(model),
                        {STATE_DICT_ATTR: Typed(attribute_text(layout))})
    weights = {name: params[name].detach().to(torch.float32).cpu().numpy().copy()
               for name in names}
    # The buffer arguments' values, which zshard-run --init-from reads.
    weights.update({name: b.detach().cpu().numpy().copy() for name, b in state_buffers.items()})
    lr0 = groups[names[0]].lr
    meta = {
        "producer": "zshard-export",
        "torch": torch.__version__,
        "model": type(model).__name__,
        "lr": lr0,
        "params": {n: list(params[n].shape) for n in names},
        "buffers": {n: list(b.shape) for n, b in state_buffers.items()},
        "param_count": int(sum(params[n].numel() for n in names)),
        "batch": {k: {"dtype": str(v.dtype).replace("torch.", ""), "shape": list(v.shape)}
                  for k, v in batch.items()},
        "adamw": {n: vars(groups[n]) for n in names},
        "ops": sorted(lowering.ops),
        # The state_dict keys: the parameter or buffer argument holding each
        # (a tied weight's is the one it shares), or "buffer" for a folded
        # persistent buffer.
        "state_dict": {e["name"]: e.get("param", "buffer") for e in layout},
    }
    return ExportResult(text, weights, meta)


# ------------------------------------------------------------------ checks

def _check_params(model):
    params = {}
    for name, p in model.named_parameters():
        if not _NAME.match(name):
            raise ExportError(f"parameter name '{name}' is not a dotted path of identifiers")
        if not p.requires_grad:
            raise ExportError(f"parameter '{name}' does not require grad: frozen parameters "
                              f"are not part of the contract")
        if p.dtype != torch.float32:
            raise ExportError(f"parameter '{name}' is {p.dtype}; the exporter writes f32 steps")
        if p.dim() == 0:
            raise ExportError(f"parameter '{name}' is 0-d; parameters need at least one dimension")
        params[name] = p
    if not params:
        raise ExportError("the model has no parameters")
    return params


def _check_optimizer(optimizer, params):
    if type(optimizer) is not torch.optim.AdamW:
        raise ExportError(f"the optimizer must be torch.optim.AdamW, got "
                          f"{type(optimizer).__name__}")
    if len(optimizer.state):
        raise ExportError("the optimizer already has state: export before the first "
                          "optimizer.step() (the step starts at AdamW's step 1)")
    by_id = {id(p): n for n, p in params.items()}
    groups, lrs = {}, set()
    for g in optimizer.param_groups:
        for key, bad in (("amsgrad", True), ("maximize", True), ("differentiable", True)):
            if g.get(key) == bad:
                raise ExportError(f"AdamW option {key}={bad} is not supported")
        for key in ("lr", "eps", "weight_decay"):
            if isinstance(g[key], torch.Tensor):
                raise ExportError(f"AdamW's {key} must be a Python float")
        b1, b2 = g["betas"]
        if isinstance(b1, torch.Tensor) or isinstance(b2, torch.Tensor):
            raise ExportError("AdamW's betas must be Python floats")
        if not math.isfinite(float(g["lr"])) or float(g["lr"]) < 0:
            raise ExportError(f"AdamW's lr is {g['lr']}; it must be a finite number >= 0")
        lrs.add(float(g["lr"]))
        cfg = AdamWGroup(float(g["lr"]), float(b1), float(b2), float(g["eps"]),
                         float(g["weight_decay"]))
        for p in g["params"]:
            name = by_id.get(id(p))
            if name is None:
                raise ExportError("the optimizer holds a tensor that is not a parameter of "
                                  "the model")
            if name in groups:
                raise ExportError(f"parameter '{name}' is in two AdamW parameter groups")
            groups[name] = cfg
    missing = [n for n in params if n not in groups]
    if missing:
        raise ExportError(f"parameters not in the optimizer: {', '.join(missing[:5])}")
    if len(lrs) > 1:
        raise ExportError("AdamW parameter groups with different learning rates are not "
                          "supported (the step takes one lr)")
    return groups


def _check_batch(batch):
    if not isinstance(batch, dict) or not batch:
        raise ExportError("batch must be a non-empty dict of name -> example tensor")
    out = {}
    for name, t in batch.items():
        if not isinstance(name, str) or not _IDENT.match(name) or name in ("lr", "step"):
            raise ExportError(f"batch name {name!r} must be an identifier other than lr and step")
        if not isinstance(t, torch.Tensor):
            raise ExportError(f"batch entry '{name}' is not a tensor")
        if t.dtype not in (torch.float32, torch.int64, torch.int32):
            raise ExportError(f"batch entry '{name}' is {t.dtype}; use float32 or int64/int32")
        if t.dim() == 0:
            raise ExportError(f"batch entry '{name}' is 0-d; batch tensors need a batch dimension")
        out[name] = t.detach()
    return out


def _init_spec(p):
    """An init spec that reproduces the parameter's distribution (zshard-run's
    own initialisation, when it does not start from the exported weights)."""
    t = p.detach().to(torch.float64)
    if bool((t == 0).all()):
        return "zeros"
    if bool((t == 1).all()):
        return "ones"
    mean = float(t.mean())
    std = float(t.std()) if t.numel() > 1 else 0.0
    # A mean within three standard errors of 0 is taken as 0.
    mean = 0.0 if abs(mean) <= 3 * std / math.sqrt(t.numel()) else mean
    return f"normal({_num(mean)}, {_num(std)})"


def _num(x):
    s = "%.6g" % x
    if "e" in s or "inf" in s or "nan" in s:
        s = ("%.12f" % x).rstrip("0").rstrip(".") or "0"
    return s


def _owner(name):
    return name.rsplit(".", 1)[0] if "." in name else name


# ----------------------------------------------------------------- AdamW

def _emit_adamw(fn, names, params, groups, grads, states, lr, step):
    """torch.optim.AdamW (single-tensor, decoupled weight decay) as one
    zshard.adamw per parameter, in the op's `torch` order, which is torch's
    order of operations (zshard-lower-adamw writes the arithmetic):
    p *= 1 - lr*wd; m = lerp(m, g, 1-beta1); v = v*beta2 + (1-beta2)*g*g;
    p += -step_size * m / (sqrt(v) / sqrt(bc2) + eps), with
    step_size = lr / (1 - beta1^t) and bc2 = 1 - beta2^t.
    """
    updates = {}
    for name in names:
        cfg = groups[name]
        p, g = Val(f"%arg{names.index(name)}", params[name].shape, "f32"), grads[name]
        m, v = states[(name, "exp_avg")], states[(name, "exp_avg_sq")]
        text = (f"zshard.adamw torch {p.name}, {g.name}, {m.name}, {v.name} "
                f"lr {lr.name} step {step.name} "
                f"betas({_f64(cfg.beta1)}, {_f64(cfg.beta2)}) eps({_f64(cfg.eps)}) "
                f"weight_decay({_f64(cfg.weight_decay)}) "
                f": {p.type}, {g.type}, {m.type}, {v.type}")
        results = fn.op_results(text, _owner(name), 3)
        updates[name] = [Val(r, p.shape, "f32") for r in results]
    return updates


# ----------------------------------------------------------------- printing

class Typed(str):
    """An attribute value printed as is (`0.001 : f64`), not as a string."""


def _f64(x):
    """A float literal MLIR parses back to exactly x (it needs a '.')."""
    s = repr(float(x))
    mant, _, exp = s.partition("e")
    if "." not in mant:
        mant += ".0"
    return mant + ("e" + exp if exp else "")


def _attrs(d):
    def value(v):
        return str(v) if isinstance(v, Typed) else f'"{v}"'
    return "{" + ", ".join(f"{k} = {value(v)}" for k, v in sorted(d.items())) + "}"


def module_classes(model):
    """{module path: class name} of every submodule of `model` (the step's
    zshard.module_classes, read by --wrap transformer=CLASS)."""
    return {name: type(mod).__name__ for name, mod in model.named_modules() if name}


def _module_text(fn, arg_specs, results, classes, module_attrs):
    args = ",\n      ".join(f"{a.name}: {a.type} {_attrs(attrs)}" for a, attrs in arg_specs)
    res = ",\n      ".join(f"{v.type} {_attrs(attrs)}" for v, attrs in results)
    step_attrs = "zshard.step"
    if classes:
        entries = ", ".join(f'"{path}" = "{cls}"' for path, cls in sorted(classes.items()))
        step_attrs = f"zshard.module_classes = {{{entries}}}, {step_attrs}"
    lines = [f"module attributes {_attrs(module_attrs)} {{",
             f"  func.func @train_step(\n      {args})\n      -> ({res})\n      attributes {{{step_attrs}}} {{"]
    lines += fn.lines
    ret_vals = ", ".join(v.name for v, _ in results)
    ret_types = ", ".join(v.type for v, _ in results)
    lines.append(f'    func.return {ret_vals} : {ret_types} loc("")')
    lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"
