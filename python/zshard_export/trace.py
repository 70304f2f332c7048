"""Captures the joint forward + backward graph of a module and its loss.

The graph is traced with torch's own machinery: ``torch.func.functionalize``
(no in-place ops or aliasing left) under ``make_fx`` with fake tensors (so no
value is ever computed and data-dependent control flow fails instead of
silently picking a branch), ``torch.autograd.grad`` for the backward, and a
decomposition table that brings the backward formulas down to core ATen.

Module paths: a global forward pre/post hook keeps the stack of module paths
of the running forward and writes the innermost one into the FX node
metadata (``node.meta["custom"]["zshard_path"]``) as nodes are created.
Backward nodes are created while the autograd engine runs a grad_fn; a hook
on every grad_fn sets the fx "seq_nr" of that grad_fn, the same number the
forward node that created it carries, so each backward node takes the path
of its forward node. Nodes that neither rule names (gradient accumulation of
values used twice, done by the engine itself) take the common prefix of the
paths of their inputs.
"""

import torch
import torch.fx.traceback as fx_traceback
from torch.fx.experimental.proxy_tensor import make_fx

from .attention import CausalAttentionMode
from .batch_mean import BatchMeanLossMode
from .dropout import DropoutGuard
from .errors import ExportError, exc_frame, one_line

PATH_KEY = "zshard_path"
# gm.meta[CLASSES_KEY]: module path -> class name, for messages.
CLASSES_KEY = "zshard_classes"


class _StepModule(torch.nn.Module):
    """Calls loss_fn(model, **batch): the module whose parameters are traced."""

    def __init__(self, model, loss_fn):
        super().__init__()
        self.m = model
        self._loss_fn = loss_fn

    def forward(self, batch):
        return self._loss_fn(self.m, **batch)


def _decompositions():
    from torch._decomp import core_aten_decompositions
    table = dict(core_aten_decompositions())
    return table


def trace_joint(model, params, batch, loss_fn, buffers=None):
    """Traces loss and d loss / d params.

    params: ordered {name: Parameter} (unique tensors); batch: {name: Tensor};
    buffers: ordered {name: Tensor} of the buffers the module reads (they are
    inputs of the trace, so fake tensors stand for them as for parameters).
    Returns the GraphModule, whose placeholders are the params, the buffers,
    then the batch values (flattened in that order) and whose output is
    (loss, grads).
    """
    buffers = dict(buffers or {})
    step_module = _StepModule(model, loss_fn)
    names = list(params)
    module_names = {mod: name for name, mod in model.named_modules()}
    modules = {name: mod for mod, name in module_names.items()}
    stack = []

    def running():
        """(path, module) of the innermost running forward; (None, None)
        outside the model (the loss function, the backward)."""
        return (stack[-1], modules.get(stack[-1])) if stack else (None, None)

    def set_path(path):
        custom = dict(fx_traceback.current_meta.get("custom", {}))
        custom[PATH_KEY] = path
        fx_traceback.current_meta["custom"] = custom

    def pre_hook(mod, args, kwargs=None):
        path = module_names.get(mod)
        if path is not None:
            stack.append(path)
            set_path(path)

    def post_hook(mod, args, out):
        if module_names.get(mod) is not None and stack:
            stack.pop()
            set_path(stack[-1] if stack else "")

    def step(flat_params, flat_buffers, flat_batch):
        p = {("m." + n): t for n, t in zip(names, flat_params)}
        p.update({("m." + n): t for n, t in zip(buffers, flat_buffers)})
        b = dict(zip(batch.keys(), flat_batch))
        set_path("")
        with DropoutGuard(running), CausalAttentionMode(), BatchMeanLossMode():
            out = torch.func.functional_call(step_module, p, (b,), tie_weights=True,
                                             strict=False)
        loss = _pick_loss(out)
        set_path("")
        handles = []
        seen, todo = set(), [loss.grad_fn]
        while todo:
            fn = todo.pop()
            if fn is None or fn in seen:
                continue
            seen.add(fn)
            todo.extend(f for f, _ in fn.next_functions)
            handles.append(fn.register_prehook(_enter_grad_fn(fn._sequence_nr())))
            handles.append(fn.register_hook(_leave_grad_fn))
        wanted = [t for t in flat_params]
        grads = torch.autograd.grad(loss, wanted, allow_unused=True)
        # An unused parameter's gradient is zero (None would vanish from the
        # flattened outputs).
        grads = [torch.zeros_like(t) if g is None else g for g, t in zip(grads, wanted)]
        for h in handles:
            h.remove()
        return loss, tuple(grads)

    h1 = torch.nn.modules.module.register_module_forward_pre_hook(pre_hook)
    h2 = torch.nn.modules.module.register_module_forward_hook(post_hook)
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        with sdpa_kernel(SDPBackend.MATH), fx_traceback.preserve_node_meta():
            gm = make_fx(step, decomposition_table=_decompositions(), tracing_mode="fake",
                         record_stack_traces=True)(list(params.values()), list(buffers.values()),
                                                    list(batch.values()))
    except ExportError:
        raise
    except Exception as exc:  # noqa: BLE001 - every tracing failure is reported
        path, module = running()
        where = (f"in module '{path}' ({type(module).__name__})" if module is not None
                 else "outside the model's forward (in the loss function or the backward)")
        frame = exc_frame(exc)
        kind = type(exc).__name__
        text = one_line(exc) or kind
        data_dependent = any(k in kind for k in ("DataDependent", "GuardOnDataDependent")) or \
            "data-dependent" in str(exc) or "data dependent" in str(exc) or \
            "_local_scalar_dense" in str(exc)
        if data_dependent:
            msg = (f"data-dependent control flow or value {where}: the step is traced "
                   f"with shapes only, so a Python branch or .item() on a tensor value "
                   f"cannot be captured ({kind}: {text})")
        else:
            msg = f"tracing failed {where}: {kind}: {text}"
        if frame:
            msg += f" at {frame}"
        raise ExportError(msg) from exc
    finally:
        h1.remove()
        h2.remove()
    _assign_paths(gm)
    if any(_is_mutating(n) for n in gm.graph.nodes):
        gm = _functionalize(gm)
    gm.meta[CLASSES_KEY] = {name: type(mod).__name__ for name, mod in modules.items()}
    return gm


def _is_mutating(node):
    if node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload):
        return False
    return node.target._schema.is_mutable


def _functionalize(gm):
    """Retraces a graph with in-place ops into a functional one, keeping paths."""
    for n in gm.graph.nodes:
        if n.op == "call_function":
            custom = dict(n.meta.get("custom", {}))
            custom[PATH_KEY] = n.meta.get("zshard_path", "")
            n.meta["custom"] = custom
    placeholders = [n.meta["val"] for n in gm.graph.nodes if n.op == "placeholder"]
    fake_mode = placeholders[0].fake_mode if placeholders else None

    def run(*args):
        return torch.fx.Interpreter(gm).run(*args)

    with fx_traceback.preserve_node_meta():
        args = [torch.empty_strided(v.shape, v.stride(), dtype=v.dtype) for v in placeholders]
        new = make_fx(torch.func.functionalize(run, remove="mutations"),
                      decomposition_table=_decompositions(), tracing_mode="fake")(*args)
    mutating = [n for n in new.graph.nodes if n.op == "call_function" and _is_mutating(n)]
    if mutating:
        n = mutating[0]
        err = ExportError(f"the step mutates one of its inputs ({n.target} in module "
                          f"'{n.meta.get('custom', {}).get(PATH_KEY, '')}'): parameters, "
                          f"buffers and batch tensors must not be changed in place")
        # Which inputs (positions in the flattened params, buffers, batch)
        # are changed, for a message naming a persistent buffer.
        inputs = [p for p in new.graph.nodes if p.op == "placeholder"]
        err.mutated = sorted({(inputs.index(m.args[0]), str(m.target)) for m in mutating
                              if m.args and m.args[0] in inputs})
        raise err
    for n in new.graph.nodes:
        if n.op != "call_function":
            continue
        n.meta["zshard_path"] = n.meta.get("custom", {}).get(PATH_KEY, "")
    return new


def _pick_loss(out):
    if isinstance(out, (tuple, list)) and out:
        out = out[-1]
    if not isinstance(out, torch.Tensor) or out.dim() != 0 or not out.is_floating_point():
        raise ExportError("the loss must be a 0-d floating-point tensor (the loss function's "
                          "result, or the last element of the tuple it returns)")
    if out.dtype != torch.float32:
        raise ExportError(f"the loss is {out.dtype}; the contract's loss is f32")
    return out


def _enter_grad_fn(seq_nr):
    def prehook(grad_outputs):
        fx_traceback.set_grad_fn_seq_nr(seq_nr)
        fx_traceback._mark_autograd_backward()
    return prehook


def _leave_grad_fn(grad_inputs, grad_outputs):
    fx_traceback.reset_grad_fn_seq_nr()
    fx_traceback._reset_autograd_backward()


def node_path(node):
    return node.meta.get("zshard_path", "")


def _assign_paths(gm):
    """Sets node.meta['zshard_path'] on every call_function node."""
    fwd_path = {}
    nodes = [n for n in gm.graph.nodes if n.op == "call_function"]
    for n in nodes:
        if not n.meta.get("autograd_backward"):
            path = n.meta.get("custom", {}).get(PATH_KEY)
            if path is not None and n.meta.get("seq_nr") is not None:
                fwd_path.setdefault(n.meta["seq_nr"], path)
    # A backward node takes the path of the forward node with its seq_nr.
    for n in nodes:
        path = None
        if n.meta.get("autograd_backward"):
            path = fwd_path.get(n.meta.get("seq_nr"))
            n.meta["zshard_path_rule"] = "backward"
        else:
            path = n.meta.get("custom", {}).get(PATH_KEY)
        if path is not None:
            n.meta["zshard_path"] = path
    # Forward nodes that run after the loss (accumulations in the engine) and
    # anything else left: the common prefix of the inputs' paths.
    loss_ancestors = _loss_ancestors(gm)
    for n in nodes:
        if "zshard_path" in n.meta and (n in loss_ancestors or n.meta.get("autograd_backward")):
            continue
        inputs = [a for a in n.all_input_nodes if a.op == "call_function"]
        paths = [a.meta.get("zshard_path", "") for a in inputs]
        n.meta["zshard_path"] = _common_prefix(paths) if paths else n.meta.get("zshard_path", "")


def _loss_ancestors(gm):
    out = [n for n in gm.graph.nodes if n.op == "output"][0]
    loss = out.args[0][0]
    seen, todo = set(), [loss]
    while todo:
        n = todo.pop()
        if n in seen or not isinstance(n, torch.fx.Node):
            continue
        seen.add(n)
        todo.extend(n.all_input_nodes)
    return seen


def _common_prefix(paths):
    parts = [p.split(".") if p else [] for p in paths]
    prefix = []
    for items in zip(*parts):
        if all(x == items[0] for x in items):
            prefix.append(items[0])
        else:
            break
    return ".".join(prefix)
