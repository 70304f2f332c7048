"""Lowers the traced joint graph (core ATen, static shapes) to linalg on tensors.

One function per aten op in ``OPS``; docs/zshard-export.md lists them with
what each becomes. View ops (permute, expand, slice, select, (un)squeeze)
stay lazy affine views that the consuming linalg.generic reads through its
indexing maps; matrix products fold transposes into their indexing maps
(as zshard-gen writes them), so the runtime's BLAS sees plain operands.
"""

import operator
import re
import traceback

import torch

from .constants import fold
from .errors import ExportError, is_user_file, one_line, user_frame
from .mlir import DTYPES, Body, Val, View, is_float, ttype
from .trace import CLASSES_KEY

aten = torch.ops.aten
OPS = {}


def op(*targets):
    def register(fn):
        for t in targets:
            OPS[t] = fn
        return fn
    return register


def dtype_of(t, what):
    dt = DTYPES.get(t.dtype)
    if dt is None:
        raise ExportError(f"{what} has dtype {t.dtype}, which the exporter does not lower")
    return dt


class Lowering:
    """Walks the graph in order and emits MLIR for every live node."""

    def __init__(self, gm, fn, env):
        self.gm, self.fn, self.env = gm, fn, dict(env)
        self.node = None
        self.ops = set()

    # ---------------------------------------------------------------- helpers
    @property
    def loc(self):
        return self.node.meta.get("zshard_path", "") if self.node is not None else ""

    def fail(self, why, hint=""):
        """Raises `WHY in module 'PATH' (Class)[: HINT] at file:line: code`."""
        cls = self.gm.meta.get(CLASSES_KEY, {}).get(self.loc)
        if cls and not self.loc:
            cls = f"the root {cls}, or the loss function"
        text = f"{why} in module '{self.loc}'" + (f" ({cls})" if cls else "")
        if hint:
            text += f": {hint}"
        frame = _node_frame(self.node) if self.node is not None else None
        raise ExportError(text + (f" at {frame}" if frame else ""))

    def meta(self, node=None):
        v = (node or self.node).meta.get("val")
        return v

    def out_shape(self, i=None):
        v = self.meta()
        if i is not None:
            v = v[i]
        return tuple(int(s) for s in v.shape)

    def out_dt(self, i=None):
        v = self.meta()
        if i is not None:
            v = v[i]
        return dtype_of(v, f"the result of {self.node.target}")

    def get(self, a):
        if isinstance(a, torch.fx.Node):
            if a not in self.env and a.op == "get_attr":
                self.env[a] = self.constant(a)
            return self.env[a]
        return a

    def constant(self, node):
        """A tensor constant of the graph (a derived buffer, a torch.tensor in
        the forward) folded into the step."""
        t = getattr(self.gm, node.target, None)
        if not isinstance(t, torch.Tensor):
            self.fail(f"unsupported graph attribute '{node.target}' ({type(t).__name__})")
        return fold(self.fn, t, f"'{node.target}'", self.loc, self.fail)

    def mat(self, x):
        """A Val for x, copying a view once."""
        if isinstance(x, Val):
            return x
        if x.is_identity():
            return x.src
        if x.materialised is None:
            init = self.fn.empty(x.shape, x.dt, self.loc)
            r = len(x.shape)
            ident = [(i, 1, 0) for i in range(r)]
            x.materialised = self.fn.generic(
                self.loc, r, ["parallel"] * r, [(x, ident)], [(init, ident)],
                lambda b, i, o: [i[0]])[0]
        return x.materialised

    def run(self, outputs):
        live = set()
        todo = list(outputs)
        while todo:
            n = todo.pop()
            if not isinstance(n, torch.fx.Node) or n in live:
                continue
            live.add(n)
            todo.extend(n.all_input_nodes)
        order = [n for n in self.gm.graph.nodes if n.op == "call_function" and n in live]
        for node in order:  # random ops first: they explain the ops around them
            if _is_random(node.target):
                self.node = node
                self.fail(f"random op {_op_name(node.target)}",
                          "the exported step is deterministic (no dropout with p > 0, "
                          "no torch.rand, randn or bernoulli in the forward)")
        for node in order:
            self.node = node
            self.ops.add(_op_name(node.target))
            fn = OPS.get(node.target)
            if fn is None:
                self.fail(f"unsupported op {_op_name(node.target)}")
            try:
                self.env[node] = fn(self, *node.args, **node.kwargs)
            except ExportError:
                raise
            except Exception as exc:  # noqa: BLE001 - a lowering bug, named by its op
                self.fail(f"internal error lowering {_op_name(node.target)}",
                          f"{type(exc).__name__}: {one_line(exc)} (please report)")
        self.node = None
        return self.env

    # ------------------------------------------------------------ elementwise
    def bcast_exprs(self, shape, out_shape):
        r, R = len(shape), len(out_shape)
        exprs = []
        for j, s in enumerate(shape):
            k = R - r + j
            exprs.append((k, 1, 0) if s == out_shape[k] else (None, 1, 0))
        return exprs

    def ew(self, operands, fn, compute_dt=None, out_shape=None, out_dt=None, fn_dt=None):
        """An elementwise generic over the node's result shape.

        operands: Vals/Views/Python scalars; fn(body, args, dt) gets them all
        as values of compute_dt (default: the result dtype) and returns one
        value of fn_dt (default compute_dt), converted to the result dtype.
        """
        out_shape = self.out_shape() if out_shape is None else out_shape
        out_dt = out_dt or self.out_dt()
        compute_dt = compute_dt or out_dt
        fn_dt = fn_dt or compute_dt
        tensors = [x for x in operands if isinstance(x, (Val, View))]
        inputs = [(x, self.bcast_exprs(x.shape, out_shape)) for x in tensors]
        init = self.fn.empty(out_shape, out_dt, self.loc)
        r = len(out_shape)

        def body(b, ins, outs):
            it = iter(ins)
            args = []
            for x in operands:
                if isinstance(x, (Val, View)):
                    args.append(b.cast(next(it), x.dt, compute_dt))
                else:
                    args.append(b.const(_scalar(x, compute_dt), compute_dt))
            return [b.cast(fn(b, args, compute_dt), fn_dt, out_dt)]

        return self.fn.generic(self.loc, r, ["parallel"] * r, inputs,
                               [(init, [(i, 1, 0) for i in range(r)])], body)[0]

    def promoted(self, *args):
        from torch._prims_common import ELEMENTWISE_TYPE_PROMOTION_KIND, elementwise_dtypes
        vals = [a.meta["val"] if isinstance(a, torch.fx.Node) else a for a in args]
        _, result = elementwise_dtypes(
            *vals, type_promotion_kind=ELEMENTWISE_TYPE_PROMOTION_KIND.DEFAULT)
        return dtype_of(torch.empty((), dtype=result), "an operand")

    # ---------------------------------------------------------------- reshape
    def reshape(self, x, shape):
        x = self.mat(x)
        shape = tuple(int(s) for s in shape)
        if x.shape == shape:
            return x
        n = 1
        for s in shape:
            n *= s
        flat = x
        if len(x.shape) > 1:
            t = ttype((n,), x.dt)
            dims = ", ".join(str(i) for i in range(len(x.shape)))
            flat = Val(self.fn.op(f"tensor.collapse_shape {x.name} [[{dims}]] : {x.type} into {t}",
                                  self.loc), (n,), x.dt)
        elif len(x.shape) == 0:
            t = ttype((1,), x.dt)
            flat = Val(self.fn.op(f"tensor.expand_shape {x.name} [] output_shape [1] : "
                                  f"{x.type} into {t}", self.loc), (1,), x.dt)
        if len(shape) > 1:
            dims = ", ".join(str(i) for i in range(len(shape)))
            out = ", ".join(str(s) for s in shape)
            t = ttype(shape, x.dt)
            return Val(self.fn.op(f"tensor.expand_shape {flat.name} [[{dims}]] output_shape "
                                  f"[{out}] : {flat.type} into {t}", self.loc), shape, x.dt)
        if len(shape) == 0:
            t = ttype((), x.dt)
            return Val(self.fn.op(f"tensor.collapse_shape {flat.name} [] : {flat.type} into {t}",
                                  self.loc), (), x.dt)
        return flat

    def view(self, x, shape, exprs):
        return View(x.source, shape, _compose_view(x, exprs))

    # ------------------------------------------------------------- reductions
    def reduce(self, x, dims, out_dt, init_value, combine, pre=None, compute_dt=None):
        """Reduces x over dims; returns a Val without the reduced dims."""
        r = len(x.shape)
        dims = sorted({d % r for d in dims}) if r else []
        kept = [i for i in range(r) if i not in dims]
        compute_dt = compute_dt or out_dt
        init = self.fn.filled(tuple(x.shape[i] for i in kept), out_dt, init_value, self.loc)
        iters = ["reduction" if i in dims else "parallel" for i in range(r)]

        def body(b, ins, outs):
            v = b.cast(ins[0], x.dt, compute_dt)
            if pre:
                v = pre(b, v, compute_dt)
            acc = b.cast(outs[0], out_dt, compute_dt)
            return [b.cast(combine(b, acc, v, compute_dt), compute_dt, out_dt)]

        return self.fn.generic(self.loc, r, iters, [(x, [(i, 1, 0) for i in range(r)])],
                               [(init, [(i, 1, 0) for i in kept])], body)[0]

    def reduce_node(self, x, dims, keepdim, init_value, combine, pre=None, out_dt=None):
        x = self.get(x)
        r = len(x.shape)
        if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
            dims = list(range(r))
        elif isinstance(dims, int):
            dims = [dims]
        out_dt = out_dt or self.out_dt()
        res = self.reduce(x, dims, out_dt, init_value, combine, pre)
        return self.reshape(res, self.out_shape()) if res.shape != self.out_shape() else res


def _compose_view(x, exprs):
    from .mlir import compose
    return compose(x, exprs)


def _scalar(x, dt):
    if isinstance(x, bool):
        return int(x)
    if not is_float(dt):
        return int(x)
    return float(x)


def _is_random(target):
    return isinstance(target, torch._ops.OpOverload) and \
        torch.Tag.nondeterministic_seeded in target.tags


_FRAME = re.compile(r'^\s*File "(.+)", line (\d+), in ')


def _node_frame(node):
    """`file:line: code` of the innermost user frame of a node's stack trace."""
    lines = (node.meta.get("stack_trace") or "").splitlines()
    best = None
    for i, line in enumerate(lines):
        m = _FRAME.match(line)
        if m and is_user_file(m.group(1)):
            code = lines[i + 1].strip() if i + 1 < len(lines) else ""
            best = (m.group(1), int(m.group(2)), code)
    if best is None:
        return None
    return user_frame([traceback.FrameSummary(best[0], best[1], "", line=best[2])])


def _op_name(target):
    if isinstance(target, torch._ops.OpOverload):
        return str(target)
    return getattr(target, "__name__", str(target))


# ===================================================================== ops ===

def _binary_op(kind, alpha_on_second=False, rsub=False):
    def lower(L, a, b, alpha=1, **kw):
        if kw.get("rounding_mode") is not None:
            L.fail(f"unsupported op {_op_name(L.node.target)} with rounding_mode")
        x, y = L.get(a), L.get(b)
        if rsub:
            x, y = y, x

        def fn(bb, args, dt):
            p, q = args
            if alpha != 1:
                q = bb.binary("mul", q, bb.const(_scalar(alpha, dt), dt), dt)
            return bb.binary(kind, p, q, dt)
        return L.ew([x, y], fn)
    return lower


op(aten.add.Tensor, aten.add.Scalar)(_binary_op("add"))
op(aten.sub.Tensor, aten.sub.Scalar)(_binary_op("sub"))
op(aten.rsub.Scalar, aten.rsub.Tensor)(_binary_op("sub", rsub=True))
op(aten.mul.Tensor, aten.mul.Scalar)(_binary_op("mul"))
op(aten.div.Tensor, aten.div.Scalar, aten.div.Tensor_mode)(_binary_op("div"))
op(aten.maximum.default)(_binary_op("max"))
op(aten.minimum.default)(_binary_op("min"))
op(aten.pow.Tensor_Tensor)(_binary_op("pow"))


@op(aten.pow.Tensor_Scalar)
def _pow_scalar(L, a, e):
    x = L.get(a)
    if not is_float(L.out_dt()):
        L.fail("unsupported op aten.pow.Tensor_Scalar on integers")

    def fn(b, args, dt):
        (v,) = args
        if e == 1:
            return v
        if e == 2:
            return b.binary("mul", v, v, dt)
        if e == 3:
            return b.binary("mul", b.binary("mul", v, v, dt), v, dt)
        if e == 0.5:
            return b.math("sqrt", v, dt)
        if e == -0.5:
            return b.math("rsqrt", v, dt)
        return b.binary("pow", v, b.const(float(e), dt), dt)
    return L.ew([x], fn)


@op(aten.pow.Scalar)
def _pow_base(L, base, a):
    return L.ew([base, L.get(a)], lambda b, args, dt: b.binary("pow", args[0], args[1], dt))


def _math_op(name):
    def lower(L, a):
        if not is_float(L.out_dt()):
            L.fail(f"unsupported op {_op_name(L.node.target)} on {L.out_dt()}")
        return L.ew([L.get(a)], lambda b, args, dt: b.math(name, args[0], dt))
    return lower


for _name in ("exp", "log", "tanh", "sqrt", "rsqrt", "erf", "sin", "cos", "log1p", "expm1"):
    op(getattr(aten, _name).default)(_math_op(_name))


@op(aten.abs.default)
def _abs(L, a):
    dt = L.out_dt()
    return L.ew([L.get(a)], lambda b, args, d: b.math("absf" if is_float(d) else "absi", args[0], d))


@op(aten.neg.default)
def _neg(L, a):
    return L.ew([L.get(a)], lambda b, args, dt: b.neg(args[0], dt))


@op(aten.reciprocal.default)
def _reciprocal(L, a):
    return L.ew([L.get(a)], lambda b, args, dt: b.binary("div", b.const(1.0, dt), args[0], dt))


@op(aten.sigmoid.default)
def _sigmoid(L, a):
    def fn(b, args, dt):
        e = b.math("exp", b.neg(args[0], dt), dt)
        one = b.const(1.0, dt)
        return b.binary("div", one, b.binary("add", one, e, dt), dt)
    return L.ew([L.get(a)], fn)


@op(aten.relu.default)
def _relu(L, a):
    return L.ew([L.get(a)], lambda b, args, dt: b.binary("max", args[0], b.const(0, dt), dt))


@op(aten.gelu.default)
def _gelu(L, a, approximate="none"):
    def fn(b, args, dt):
        (x,) = args
        half, one = b.const(0.5, dt), b.const(1.0, dt)
        if approximate == "tanh":
            beta = b.const(0.7978845608028654, dt)  # sqrt(2 / pi)
            kappa = b.const(0.044715, dt)
            cube = b.binary("mul", b.binary("mul", x, x, dt), x, dt)
            inner = b.binary("mul", beta, b.binary("add", x, b.binary("mul", kappa, cube, dt), dt), dt)
            t = b.binary("add", one, b.math("tanh", inner, dt), dt)
            return b.binary("mul", b.binary("mul", half, x, dt), t, dt)
        s = b.const(0.7071067811865476, dt)
        t = b.binary("add", one, b.math("erf", b.binary("mul", x, s, dt), dt), dt)
        return b.binary("mul", b.binary("mul", x, half, dt), t, dt)
    return L.ew([L.get(a)], fn)


def _compare(kind):
    def lower(L, a, b):
        dt = L.promoted(a, b)
        return L.ew([L.get(a), L.get(b)], lambda bb, args, d: bb.cmp(kind, args[0], args[1], d),
                    compute_dt=dt, fn_dt="i1")
    return lower


for _k in ("eq", "ne", "lt", "le", "gt", "ge"):
    op(getattr(aten, _k).Scalar, getattr(aten, _k).Tensor)(_compare(_k))


def _logical(kind):
    def lower(L, a, b=None):
        operands = [L.get(a)] + ([L.get(b)] if b is not None else [])

        def fn(bb, args, dt):
            if kind == "not":
                return bb.lnot(args[0], "i1")
            return bb.binary(kind, args[0], args[1], "i1")
        return L.ew(operands, fn, compute_dt="i1", fn_dt="i1")
    return lower


op(aten.logical_and.default)(_logical("and"))
op(aten.logical_or.default)(_logical("or"))
op(aten.logical_xor.default)(_logical("xor"))
op(aten.logical_not.default)(_logical("not"))


def _bitwise(kind):
    def lower(L, a, b=None):
        operands = [L.get(a)] + ([L.get(b)] if b is not None else [])
        if is_float(L.out_dt()):
            L.fail(f"unsupported op {_op_name(L.node.target)} on floats")

        def fn(bb, args, dt):
            if kind == "not":
                return bb.lnot(args[0], dt)
            return bb.binary(kind, args[0], args[1], dt)
        return L.ew(operands, fn)
    return lower


op(aten.bitwise_and.Tensor, aten.bitwise_and.Scalar)(_bitwise("and"))
op(aten.bitwise_or.Tensor, aten.bitwise_or.Scalar)(_bitwise("or"))
op(aten.bitwise_xor.Tensor, aten.bitwise_xor.Scalar)(_bitwise("xor"))
op(aten.bitwise_not.default)(_bitwise("not"))


@op(aten.where.self, aten.where.ScalarSelf, aten.where.ScalarOther, aten.where.Scalar)
def _where(L, c, a, b):
    cond = L.get(c)

    def fn(bb, args, dt):
        return bb.select(args[0], args[1], args[2], dt)

    dt = L.out_dt()
    operands = [cond, L.get(a), L.get(b)]
    # The condition stays i1: cast it separately from the two values.
    out_shape = L.out_shape()
    tensors = [x for x in operands if isinstance(x, (Val, View))]
    inputs = [(x, L.bcast_exprs(x.shape, out_shape)) for x in tensors]
    init = L.fn.empty(out_shape, dt, L.loc)
    r = len(out_shape)

    def body(bb, ins, outs):
        it = iter(ins)
        vals = []
        for i, x in enumerate(operands):
            want = "i1" if i == 0 else dt
            if isinstance(x, (Val, View)):
                vals.append(bb.cast(next(it), x.dt, want))
            else:
                vals.append(bb.const(_scalar(x, want), want))
        return [fn(bb, vals, dt)]
    return L.fn.generic(L.loc, r, ["parallel"] * r, inputs,
                        [(init, [(i, 1, 0) for i in range(r)])], body)[0]


@op(aten.masked_fill.Scalar, aten.masked_fill.Tensor)
def _masked_fill(L, x, mask, value):
    return _where(L, mask, value, x)


@op(aten.clamp.default, aten.clamp.Tensor)
def _clamp(L, a, min=None, max=None):
    lo, hi = L.get(min), L.get(max)
    operands = [L.get(a)] + [v for v in (lo, hi) if v is not None]

    def fn(b, args, dt):
        v = args[0]
        i = 1
        if lo is not None:
            v = b.binary("max", v, args[i], dt)
            i += 1
        if hi is not None:
            v = b.binary("min", v, args[i], dt)
        return v
    return L.ew(operands, fn)


@op(aten.clamp_min.default)
def _clamp_min(L, a, m):
    return _clamp(L, a, min=m)


@op(aten.clamp_max.default)
def _clamp_max(L, a, m):
    return _clamp(L, a, max=m)


@op(aten._to_copy.default, aten.to.dtype)
def _to_copy(L, a, *args, **kw):
    x = L.get(a)
    if L.out_dt() == x.dt:
        return x
    return L.ew([x], lambda b, args, dt: args[0], compute_dt=L.out_dt())


@op(aten.clone.default, aten.alias.default, aten.detach.default, aten.lift_fresh_copy.default,
    aten.contiguous.default)
def _identity(L, a, *args, **kw):
    return L.get(a)


# ---------------------------------------------------------------- creation

@op(aten.full.default, aten.full_like.default, aten.zeros_like.default, aten.ones_like.default,
    aten.empty_like.default, aten.new_zeros.default, aten.new_ones.default,
    aten.new_full.default, aten.new_empty.default, aten.zeros.default, aten.ones.default,
    aten.empty.memory_format, aten.scalar_tensor.default, aten.fill.Scalar)
def _fill(L, *args, **kw):
    t = L.node.target
    if t in (aten.zeros_like.default, aten.new_zeros.default, aten.zeros.default,
             aten.empty_like.default, aten.new_empty.default, aten.empty.memory_format):
        value = 0
    elif t in (aten.ones_like.default, aten.new_ones.default, aten.ones.default):
        value = 1
    elif t in (aten.full.default, aten.full_like.default, aten.new_full.default,
               aten.fill.Scalar):
        value = args[1]
    else:  # scalar_tensor
        value = args[0]
    if isinstance(value, torch.fx.Node):
        L.fail(f"unsupported op {_op_name(t)} with a tensor fill value")
    dt = L.out_dt()
    return L.fn.filled(L.out_shape(), dt, _scalar(value, dt), L.loc)


@op(aten.arange.start_step, aten.arange.default, aten.arange.start)
def _arange(L, *args, **kw):
    t = L.node.target
    if t == aten.arange.default:
        start, step = 0, 1
    else:
        start = args[0]
        step = args[2] if len(args) > 2 else kw.get("step", 1)
    dt = L.out_dt()
    shape = L.out_shape()
    init = L.fn.empty(shape, dt, L.loc)

    def body(b, ins, outs):
        i = b.emit("arith.index_cast " + b.index(0) + " : index to i64")
        if is_float(dt):
            v = b.cast(i, "i64", dt)
            return [b.binary("add", b.const(float(start), dt),
                             b.binary("mul", v, b.const(float(step), dt), dt), dt)]
        v = b.binary("add", b.const(int(start), "i64"),
                     b.binary("mul", i, b.const(int(step), "i64"), "i64"), "i64")
        return [b.cast(v, "i64", dt)]
    return L.fn.generic(L.loc, 1, ["parallel"], [], [(init, [(0, 1, 0)])], body)[0]


# ------------------------------------------------------------------ views

@op(aten.view.default, aten._unsafe_view.default, aten.reshape.default, aten.view_copy.default)
def _view(L, a, shape):
    return L.reshape(L.get(a), L.out_shape())


@op(aten.permute.default, aten.permute_copy.default)
def _permute(L, a, dims):
    x = L.get(a)
    r = len(x.shape)
    dims = [d % r for d in dims]
    exprs = [None] * r
    for i, d in enumerate(dims):
        exprs[d] = (i, 1, 0)
    return L.view(x, L.out_shape(), exprs)


@op(aten.t.default, aten.t_copy.default)
def _t(L, a):
    x = L.get(a)
    if len(x.shape) < 2:
        return x
    return L.view(x, L.out_shape(), [(1, 1, 0), (0, 1, 0)])


@op(aten.transpose.int, aten.transpose_copy.int)
def _transpose(L, a, d0, d1):
    x = L.get(a)
    r = len(x.shape)
    perm = list(range(r))
    if r:
        perm[d0 % r], perm[d1 % r] = perm[d1 % r], perm[d0 % r]
    return _permute(L, a, perm)


@op(aten.expand.default, aten.expand_copy.default)
def _expand(L, a, size, **kw):
    x = L.get(a)
    return L.view(x, L.out_shape(), L.bcast_exprs(x.shape, L.out_shape()))


@op(aten.unsqueeze.default, aten.unsqueeze_copy.default)
def _unsqueeze(L, a, d):
    x = L.get(a)
    r = len(x.shape)
    d = d % (r + 1)
    return L.view(x, L.out_shape(), [((j if j < d else j + 1), 1, 0) for j in range(r)])


@op(aten.squeeze.dims, aten.squeeze.dim, aten.squeeze.default, aten.squeeze_copy.dims)
def _squeeze(L, a, dims=None):
    x = L.get(a)
    r = len(x.shape)
    if dims is None:
        dims = [i for i in range(r) if x.shape[i] == 1]
    elif isinstance(dims, int):
        dims = [dims]
    drop = {d % r for d in dims if x.shape[d % r] == 1} if r else set()
    exprs, k = [], 0
    for j in range(r):
        if j in drop:
            exprs.append((None, 1, 0))
        else:
            exprs.append((k, 1, 0))
            k += 1
    return L.view(x, L.out_shape(), exprs)


def _slice_view(L, x, dim, start, length, step, shape):
    r = len(x.shape)
    exprs = [(j, 1, 0) for j in range(r)]
    exprs[dim] = (dim, step, start)
    return L.view(x, shape, exprs)


@op(aten.slice.Tensor, aten.slice_copy.Tensor)
def _slice(L, a, dim=0, start=None, end=None, step=1):
    x = L.get(a)
    dim = dim % len(x.shape)
    n = x.shape[dim]
    start = 0 if start is None else start
    start = max(0, min(n, start + n if start < 0 else start))
    return _slice_view(L, x, dim, start, None, step, L.out_shape())


@op(aten.narrow.default)
def _narrow(L, a, dim, start, length):
    x = L.get(a)
    dim = dim % len(x.shape)
    start = start + x.shape[dim] if start < 0 else start
    return _slice_view(L, x, dim, start, length, 1, L.out_shape())


@op(aten.select.int, aten.select_copy.int)
def _select(L, a, dim, index):
    x = L.get(a)
    r = len(x.shape)
    dim = dim % r
    index = index + x.shape[dim] if index < 0 else index
    exprs = []
    for j in range(r):
        if j == dim:
            exprs.append((None, 1, index))
        else:
            exprs.append((j if j < dim else j - 1, 1, 0))
    return L.view(x, L.out_shape(), exprs)


@op(aten.split_with_sizes.default, aten.split.Tensor, aten.split_with_sizes_copy.default,
    aten.split.sizes if hasattr(aten.split, "sizes") else aten.split.Tensor)
def _split(L, a, sizes, dim=0):
    x = L.get(a)
    dim = dim % len(x.shape)
    outs, start = [], 0
    for i, v in enumerate(L.meta()):
        shape = tuple(int(s) for s in v.shape)
        outs.append(_slice_view(L, x, dim, start, shape[dim], 1, shape))
        start += shape[dim]
    return outs


@op(aten.unbind.int)
def _unbind(L, a, dim=0):
    x = L.get(a)
    r = len(x.shape)
    dim = dim % r
    outs = []
    for i, v in enumerate(L.meta()):
        exprs = [(None, 1, i) if j == dim else ((j if j < dim else j - 1), 1, 0)
                 for j in range(r)]
        outs.append(L.view(x, tuple(int(s) for s in v.shape), exprs))
    return outs


@op(operator.getitem)
def _getitem(L, a, i):
    return L.get(a)[i]


@op(aten.cat.default)
def _cat(L, tensors, dim=0):
    shape = L.out_shape()
    dt = L.out_dt()
    dim = dim % len(shape)
    acc = L.fn.empty(shape, dt, L.loc)
    offset = 0
    for t in tensors:
        x = L.get(t)
        if 0 in x.shape:  # an empty part (torch also takes a 1-d [0] one: a cache's start)
            continue
        x = L.mat(x)
        offsets = [0] * len(shape)
        offsets[dim] = offset
        sizes = list(x.shape)
        strides = [1] * len(shape)
        text = (f"tensor.insert_slice {x.name} into {acc.name}[{', '.join(map(str, offsets))}] "
                f"[{', '.join(map(str, sizes))}] [{', '.join(map(str, strides))}] : "
                f"{x.type} into {acc.type}")
        acc = Val(L.fn.op(text, L.loc), shape, dt)
        offset += x.shape[dim]
    return acc


# ------------------------------------------------------------ matrix products

def _mm_operand(L, x, rank):
    """(Val, transposed) for a matmul operand, folding a last-two-dims transpose."""
    if isinstance(x, View) and len(x.src.shape) == rank and x.shape == tuple(
            x.src.shape[:-2]) + (x.src.shape[-1], x.src.shape[-2]):
        want = [(i, 1, 0) for i in range(rank - 2)] + [(rank - 1, 1, 0), (rank - 2, 1, 0)]
        if x.exprs() == want:
            return x.src, True
    return L.mat(x), False


def _matmul(L, a, b, rank):
    A, ta = _mm_operand(L, a, rank)
    B, tb = _mm_operand(L, b, rank)
    m = A.shape[-1] if ta else A.shape[-2]
    n = B.shape[-2] if tb else B.shape[-1]
    shape = (m, n) if rank == 2 else (A.shape[0], m, n)
    dt = L.out_dt()
    if dt != "f32" or A.dt != "f32" or B.dt != "f32":
        L.fail(f"unsupported op {_op_name(L.node.target)} on {A.dt}")
    init = L.fn.filled(shape, dt, 0.0, L.loc)
    if rank == 2:
        ma = "affine_map<(d0, d1, d2) -> (d2, d0)>" if ta else "affine_map<(d0, d1, d2) -> (d0, d2)>"
        mb = "affine_map<(d0, d1, d2) -> (d1, d2)>" if tb else "affine_map<(d0, d1, d2) -> (d2, d1)>"
        mc = "affine_map<(d0, d1, d2) -> (d0, d1)>"
        name = "linalg.matmul"
    else:
        ma = ("affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>" if ta
              else "affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>")
        mb = ("affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>" if tb
              else "affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>")
        mc = "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>"
        name = "linalg.batch_matmul"
    maps = f" indexing_maps = [{ma}, {mb}, {mc}]" if (ta or tb) else ""
    text = (f"{name}{maps} ins({A.name}, {B.name} : {A.type}, {B.type}) "
            f"outs({init.name} : {init.type}) -> {init.type}")
    return Val(L.fn.op(text, L.loc), shape, dt)


@op(aten.mm.default)
def _mm(L, a, b):
    return _matmul(L, L.get(a), L.get(b), 2)


@op(aten.bmm.default)
def _bmm(L, a, b):
    return _matmul(L, L.get(a), L.get(b), 3)


@op(aten.addmm.default)
def _addmm(L, bias, a, b, beta=1, alpha=1):
    prod = _matmul(L, L.get(a), L.get(b), 2)

    def fn(bb, args, dt):
        c, p = args
        if beta != 1:
            c = bb.binary("mul", c, bb.const(float(beta), dt), dt)
        if alpha != 1:
            p = bb.binary("mul", p, bb.const(float(alpha), dt), dt)
        return bb.binary("add", c, p, dt)
    return L.ew([L.get(bias), prod], fn)


# --------------------------------------------------------------- reductions

def _sum_combine(b, acc, v, dt):
    return b.binary("add", acc, v, dt)


@op(aten.sum.dim_IntList, aten.sum.default)
def _sum(L, a, dims=None, keepdim=False, dtype=None):
    return L.reduce_node(a, dims, keepdim, 0, _sum_combine)


@op(aten.mean.dim, aten.mean.default)
def _mean(L, a, dims=None, keepdim=False, dtype=None):
    x = L.get(a)
    s = L.reduce_node(a, dims, keepdim, 0, _sum_combine)
    count = 1
    for d, n in zip(range(len(x.shape)), x.shape):
        count *= n
    out = 1
    for n in s.shape:
        out *= n
    count = count // max(out, 1) if out else count
    return L.ew([s], lambda b, args, dt: b.binary("div", args[0], b.const(float(count), dt), dt),
                out_shape=s.shape)


@op(aten.amax.default, aten.max.default)
def _amax(L, a, dims=None, keepdim=False):
    dt = L.out_dt()
    init = float("-inf") if is_float(dt) else -(2 ** (_bits(dt) - 1))
    return L.reduce_node(a, dims, keepdim, init, lambda b, acc, v, d: b.binary("max", acc, v, d))


@op(aten.amin.default, aten.min.default)
def _amin(L, a, dims=None, keepdim=False):
    dt = L.out_dt()
    init = float("inf") if is_float(dt) else 2 ** (_bits(dt) - 1) - 1
    return L.reduce_node(a, dims, keepdim, init, lambda b, acc, v, d: b.binary("min", acc, v, d))


def _bits(dt):
    from .mlir import bits
    return bits(dt)


@op(aten.any.dim, aten.any.dims, aten.any.default)
def _any(L, a, dims=None, keepdim=False):
    return L.reduce_node(a, dims, keepdim, 0,
                         lambda b, acc, v, d: b.binary("or", acc, v, "i1"), out_dt="i1")


@op(aten.all.dim, aten.all.dims, aten.all.default)
def _all(L, a, dims=None, keepdim=False):
    return L.reduce_node(a, dims, keepdim, 1,
                         lambda b, acc, v, d: b.binary("and", acc, v, "i1"), out_dt="i1")


def _softmax_parts(L, x, dim, log):
    r = len(x.shape)
    dim = dim % r
    dt = L.out_dt()
    if not is_float(dt):
        L.fail("unsupported softmax on integers")
    mx = L.reduce(x, [dim], dt, float("-inf"), lambda b, acc, v, d: b.binary("max", acc, v, d))
    keep = [(i, 1, 0) for i in range(r) if i != dim]
    ident = [(i, 1, 0) for i in range(r)]
    # sum over dim of exp(x - max)
    init = L.fn.filled(mx.shape, dt, 0.0, L.loc)
    iters = ["reduction" if i == dim else "parallel" for i in range(r)]

    def sum_body(b, ins, outs):
        e = b.math("exp", b.binary("sub", b.cast(ins[0], x.dt, dt), ins[1], dt), dt)
        return [b.binary("add", outs[0], e, dt)]
    s = L.fn.generic(L.loc, r, iters, [(x, ident), (mx, keep)], [(init, keep)], sum_body)[0]
    out = L.fn.empty(x.shape, dt, L.loc)

    def out_body(b, ins, outs):
        v = b.binary("sub", b.cast(ins[0], x.dt, dt), ins[1], dt)
        if log:
            return [b.binary("sub", v, b.math("log", ins[2], dt), dt)]
        return [b.binary("div", b.math("exp", v, dt), ins[2], dt)]
    return L.fn.generic(L.loc, r, ["parallel"] * r, [(x, ident), (mx, keep), (s, keep)],
                        [(out, ident)], out_body)[0]


@op(aten._softmax.default)
def _softmax(L, a, dim, half_to_float=False):
    return _softmax_parts(L, L.get(a), dim, log=False)


@op(aten._log_softmax.default)
def _log_softmax(L, a, dim, half_to_float=False):
    return _softmax_parts(L, L.get(a), dim, log=True)


@op(aten.native_layer_norm.default)
def _layer_norm(L, a, normalized_shape, weight, bias, eps):
    x = L.get(a)
    r, k = len(x.shape), len(normalized_shape)
    dt = L.out_dt(0)
    if not is_float(dt):
        L.fail("unsupported layer norm on integers")
    dims = list(range(r - k, r))
    count = 1
    for d in dims:
        count *= x.shape[d]
    ident = [(i, 1, 0) for i in range(r)]
    keep = [(i, 1, 0) for i in range(r - k)]
    iters = ["parallel"] * (r - k) + ["reduction"] * k
    rows = tuple(x.shape[: r - k])
    s = L.reduce(x, dims, dt, 0.0, _sum_combine)
    mean = L.ew([s], lambda b, args, d: b.binary("div", args[0], b.const(float(count), d), d),
                out_shape=rows, out_dt=dt)
    init = L.fn.filled(rows, dt, 0.0, L.loc)

    def var_body(b, ins, outs):
        c = b.binary("sub", b.cast(ins[0], x.dt, dt), ins[1], dt)
        return [b.binary("add", outs[0], b.binary("mul", c, c, dt), dt)]
    ss = L.fn.generic(L.loc, r, iters, [(x, ident), (mean, keep)], [(init, keep)], var_body)[0]
    rstd = L.ew([ss], lambda b, args, d: b.math("rsqrt", b.binary(
        "add", b.binary("div", args[0], b.const(float(count), d), d), b.const(float(eps), d), d), d),
        out_shape=rows, out_dt=dt)
    w, bb_ = L.get(weight), L.get(bias)
    inputs = [(x, ident), (mean, keep), (rstd, keep)]
    tail = [(i, 1, 0) for i in range(r - k, r)]
    if w is not None:
        inputs.append((w, tail))
    if bb_ is not None:
        inputs.append((bb_, tail))
    out = L.fn.empty(x.shape, dt, L.loc)

    def out_body(b, ins, outs):
        v = b.binary("mul", b.binary("sub", b.cast(ins[0], x.dt, dt), ins[1], dt), ins[2], dt)
        i = 3
        if w is not None:
            v = b.binary("mul", v, b.cast(ins[i], w.dt, dt), dt)
            i += 1
        if bb_ is not None:
            v = b.binary("add", v, b.cast(ins[i], bb_.dt, dt), dt)
        return [v]
    y = L.fn.generic(L.loc, r, ["parallel"] * r, inputs, [(out, ident)], out_body)[0]
    return [y, L.reshape(mean, L.out_shape(1)), L.reshape(rstd, L.out_shape(2))]


# ------------------------------------------------------------ gather/scatter

def _index_value(b, x, dt, size):
    """An index from an integer tensor element, negative values wrapped."""
    v = b.cast(x, dt, "i64")
    zero = b.const(0, "i64")
    neg = b.cmp("lt", v, zero, "i64")
    v = b.select(neg, b.binary("add", v, b.const(size, "i64"), "i64"), v, "i64")
    return b.to_index(v, "i64")


@op(aten.embedding.default)
def _embedding(L, weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    w, idx = L.mat(L.get(weight)), L.get(indices)
    return _take(L, w, 0, idx)


def _take(L, x, k, idx):
    """out[i_<k, j..., i_>k] = x[i_<k, idx[j...], i_>k] (one index tensor at dim k)."""
    shape = L.out_shape()
    q = len(idx.shape)
    r = len(x.shape)
    out = L.fn.empty(shape, x.dt, L.loc)
    n = len(shape)
    idx_exprs = [(k + j, 1, 0) for j in range(q)]

    def body(b, ins, outs):
        indices = []
        for d in range(r):
            if d < k:
                indices.append(b.index(d))
            elif d == k:
                indices.append(_index_value(b, ins[0], idx.dt, x.shape[k]))
            else:
                indices.append(b.index(d - 1 + q))
        return [b.extract(x, indices)]
    return L.fn.generic(L.loc, n, ["parallel"] * n, [(idx, idx_exprs)],
                        [(out, [(i, 1, 0) for i in range(n)])], body)[0]


@op(aten.index.Tensor)
def _index(L, a, indices):
    x = L.mat(L.get(a))
    present = [i for i, t in enumerate(indices) if t is not None]
    if len(present) != 1:
        from .lower_index import index_several
        return index_several(L, x, indices)
    k = present[0]
    idx = L.get(indices[k])
    if idx.dt == "i1":
        L.fail("unsupported op aten.index.Tensor with a boolean mask (data-dependent shape)")
    return _take(L, x, k, idx)


@op(aten.gather.default)
def _gather(L, a, dim, index, sparse_grad=False):
    x, idx = L.mat(L.get(a)), L.get(index)
    r = len(x.shape)
    dim = dim % r
    shape = L.out_shape()
    out = L.fn.empty(shape, x.dt, L.loc)
    ident = [(i, 1, 0) for i in range(r)]

    def body(b, ins, outs):
        indices = [(_index_value(b, ins[0], idx.dt, x.shape[dim]) if d == dim else b.index(d))
                   for d in range(r)]
        return [b.extract(x, indices)]
    return L.fn.generic(L.loc, r, ["parallel"] * r, [(idx, ident)], [(out, ident)], body)[0]


@op(aten.scatter.value, aten.scatter.src)
def _scatter(L, a, dim, index, value):
    x, idx = L.get(a), L.get(index)
    r = len(x.shape)
    dim = dim % r
    ok = idx.shape[dim] == 1 and all(idx.shape[j] == x.shape[j] for j in range(r) if j != dim)
    src = L.get(value)
    if isinstance(src, (Val, View)):
        ok = ok and src.shape == idx.shape
    if not ok:
        L.fail(f"unsupported op {_op_name(L.node.target)}: only one index per row along "
               f"the scatter dimension is lowered")
    dt = L.out_dt()
    ident = [(i, 1, 0) for i in range(r)]
    row = [(None, 1, 0) if j == dim else (j, 1, 0) for j in range(r)]
    inputs = [(x, ident), (idx, row)]
    if isinstance(src, (Val, View)):
        inputs.append((src, row))
    out = L.fn.empty(x.shape, dt, L.loc)

    def body(b, ins, outs):
        here = b.index(dim)
        target = _index_value(b, ins[1], idx.dt, x.shape[dim])
        hit = b.emit(f"arith.cmpi eq, {here}, {target} : index")
        v = (b.cast(ins[2], src.dt, dt) if isinstance(src, (Val, View))
             else b.const(_scalar(src, dt), dt))
        return [b.select(hit, v, b.cast(ins[0], x.dt, dt), dt)]
    return L.fn.generic(L.loc, r, ["parallel"] * r, inputs, [(out, ident)], body)[0]


@op(aten.index_put.default)
def _index_put(L, a, indices, values, accumulate=False):
    x = L.mat(L.get(a))
    if not accumulate:
        L.fail("unsupported op aten.index_put.default without accumulate=True")
    if len(indices) != 1 or indices[0] is None:
        L.fail("unsupported op aten.index_put.default with more than one index tensor")
    idx, vals = L.get(indices[0]), L.get(values)
    if idx.dt == "i1":
        L.fail("unsupported op aten.index_put.default with a boolean mask")
    want = tuple(idx.shape) + tuple(x.shape[1:])
    if tuple(vals.shape) != want:
        vals = View(vals.source, want, _compose_view(vals, L.bcast_exprs(vals.shape, want)))
    return _scatter_add_rows(L, x, L.mat(idx), L.mat(vals))


def _scatter_add_rows(L, x, idx, vals):
    """x[idx[i...], j...] += vals[i..., j...] in O(|vals|) (embedding backward).

    An scf.forall over the trailing dims j of x (one column of x each, race
    free), walking the indices in order with an scf.for per index dim, so
    repeated indices accumulate; the column is updated in place (the forall
    bufferizes into a subview of x). zshard-gen's embedding backward has the
    same form.
    """
    fn = L.fn
    dt = x.dt
    rest = x.shape[1:]
    col = ttype((x.shape[0],), dt)
    js = [fn.fresh("j") for _ in rest] or [fn.fresh("j")]
    extents = list(rest) or [1]
    o, name = fn.fresh("o"), fn.fresh("v")
    lines = [f"{name} = scf.forall ({', '.join(js)}) in ({', '.join(map(str, extents))}) "
             f"shared_outs({o} = {x.name}) -> ({x.type}) {{"]
    slice_ = (f"[0{''.join(', ' + j for j in js[:len(rest)])}] "
              f"[{', '.join(map(str, (x.shape[0],) + (1,) * len(rest)))}] "
              f"[{', '.join(['1'] * len(x.shape))}]")
    c0, c1 = fn.fresh("c"), fn.fresh("c")
    first = fn.fresh("col")
    lines += [f"  {first} = tensor.extract_slice {o}{slice_} : {x.type} to {col}",
              f"  {c0} = arith.constant 0 : index", f"  {c1} = arith.constant 1 : index"]
    ts, loops, cur, depth = [], [], first, 1
    for extent in idx.shape:
        t, n, acc, res = fn.fresh("t"), fn.fresh("c"), fn.fresh("a"), fn.fresh("f")
        pad = "  " * depth
        lines += [f"{pad}{n} = arith.constant {int(extent)} : index",
                  f"{pad}{res} = scf.for {t} = {c0} to {n} step {c1} iter_args({acc} = {cur}) "
                  f"-> ({col}) {{"]
        ts.append(t)
        loops.append((res, pad))
        cur, depth = acc, depth + 1
    b = Body(fn)
    raw = b.extract(idx, ts)
    row = _index_value(b, raw, idx.dt, x.shape[0])
    g = b.cast(b.extract(vals, ts + js[:len(rest)]), vals.dt, dt)
    old = b.emit(f"tensor.extract {cur}[{row}] : {col}")
    new = b.emit(f"tensor.insert {b.binary('add', old, g, dt)} into {cur}[{row}] : {col}")
    pad = "  " * depth
    lines += [pad + line for line in b.lines]
    for res, pad in reversed(loops):
        lines += [f"{pad}  scf.yield {new} : {col}", f"{pad}}}"]
        new = res
    lines += ["  scf.forall.in_parallel {",
              f"    tensor.parallel_insert_slice {new} into {o}{slice_} : {col} into {x.type}",
              "  }", "}"]
    fn.region_op(lines, L.loc)
    return Val(name, x.shape, dt)


# Ops that only assert metadata: nothing to emit.
for _name in ("_assert_tensor_metadata", "_assert_scalar", "sym_constrain_range_for_size"):
    if hasattr(aten, _name):
        op(getattr(aten, _name).default)(lambda L, *a, **k: None)


def _insert(L, dst, src, offsets, sizes, strides):
    text = (f"tensor.insert_slice {src.name} into {dst.name}[{', '.join(map(str, offsets))}] "
            f"[{', '.join(map(str, sizes))}] [{', '.join(map(str, strides))}] : "
            f"{src.type} into {dst.type}")
    return Val(L.fn.op(text, L.loc), dst.shape, dst.dt)


@op(aten.slice_scatter.default)
def _slice_scatter(L, a, b, dim=0, start=None, end=None, step=1):
    x, src = L.mat(L.get(a)), L.mat(L.get(b))
    dim = dim % len(x.shape)
    n = x.shape[dim]
    start = 0 if start is None else start
    start = max(0, min(n, start + n if start < 0 else start))
    if src.shape[dim] == 0:
        return x
    offsets = [0] * len(x.shape)
    offsets[dim] = start
    strides = [1] * len(x.shape)
    strides[dim] = step
    return _insert(L, x, src, offsets, src.shape, strides)


@op(aten.select_scatter.default)
def _select_scatter(L, a, b, dim, index):
    x, src = L.mat(L.get(a)), L.get(b)
    dim = dim % len(x.shape)
    index = index + x.shape[dim] if index < 0 else index
    shape = list(x.shape)
    shape[dim] = 1
    src = L.reshape(src, shape)
    offsets = [0] * len(x.shape)
    offsets[dim] = index
    return _insert(L, x, src, offsets, shape, [1] * len(x.shape))


# Lowerings kept in their own modules; they register into OPS on import.
from . import lower_attention, lower_batch_mean, lower_pad  # noqa: E402,F401
