"""Writing MLIR text: types, constants, affine maps, linalg.generic, region ops and other ops.

The exporter prints MLIR as text (no MLIR Python bindings are needed: Debian's
MLIR 22 ships none for this Python), so everything it writes is spelled here.
"""

import struct

import torch

DTYPES = {
    torch.float32: "f32",
    torch.float64: "f64",
    torch.int64: "i64",
    torch.int32: "i32",
    torch.int16: "i16",
    torch.int8: "i8",
    torch.bool: "i1",
}


def is_float(dt):
    return dt in ("f32", "f64", "f16", "bf16")


def bits(dt):
    return {"f32": 32, "f64": 64, "i64": 64, "i32": 32, "i16": 16, "i8": 8, "i1": 1}[dt]


def ttype(shape, dt):
    if not shape:
        return f"tensor<{dt}>"
    return "tensor<" + "x".join(str(int(s)) for s in shape) + "x" + dt + ">"


def const_literal(value, dt):
    """The attribute text of a scalar constant of element type dt."""
    if dt == "f32":
        return "0x%08X : f32" % struct.unpack("<I", struct.pack("<f", float(value)))[0]
    if dt == "f64":
        return "0x%016X : f64" % struct.unpack("<Q", struct.pack("<d", float(value)))[0]
    if dt == "i1":
        return "true" if value else "false"
    return f"{int(value)} : {dt}"


def affine_map(ndims, exprs):
    """affine_map<(d0, ..) -> (e0, ..)>; exprs are (dim or None, stride, offset)."""
    dims = ", ".join(f"d{i}" for i in range(ndims))
    out = []
    for dim, stride, offset in exprs:
        if dim is None:
            out.append(str(int(offset)))
            continue
        term = f"d{dim}" if stride == 1 else f"d{dim} * {int(stride)}"
        if offset > 0:
            term += f" + {int(offset)}"
        elif offset < 0:
            term += f" - {int(-offset)}"
        out.append(term)
    return f"affine_map<({dims}) -> ({', '.join(out)})>"


class Val:
    """A materialised tensor SSA value."""

    def __init__(self, name, shape, dt):
        self.name, self.shape, self.dt = name, tuple(int(s) for s in shape), dt

    @property
    def type(self):
        return ttype(self.shape, self.dt)

    def exprs(self):
        return [(i, 1, 0) for i in range(len(self.shape))]

    @property
    def source(self):
        return self


class View:
    """A lazy affine view of a Val: permute, expand, slice, select, (un)squeeze.

    exprs[j] = (k, stride, offset) says source index j is stride * i_k +
    offset for the view index i; k None means the constant offset. Consumers
    that read through indexing maps (every linalg.generic) read the view
    directly; the others materialise it once with a copy.
    """

    def __init__(self, src, shape, exprs):
        self.src, self.shape, self.exprs_ = src, tuple(int(s) for s in shape), list(exprs)
        self.dt = src.dt
        self.materialised = None

    def exprs(self):
        return self.exprs_

    @property
    def source(self):
        return self.src

    def is_identity(self):
        return self.shape == self.src.shape and self.exprs_ == self.src.exprs()


def compose(x, out_of_view):
    """Source exprs of x read at view index exprs out_of_view (one per x dim).

    out_of_view[k] = (dim or None, stride, offset) in the consumer's index space.
    """
    result = []
    for k, s, o in x.exprs():
        if k is None:
            result.append((None, 1, o))
            continue
        d, s2, o2 = out_of_view[k]
        if d is None:
            result.append((None, 1, s * o2 + o))
        else:
            result.append((d, s * s2, s * o2 + o))
    return result


class Body:
    """The scalar ops of one linalg.generic body."""

    def __init__(self, fn):
        self.fn = fn
        self.lines = []

    def _new(self):
        return self.fn.fresh("b")

    def emit(self, text):
        name = self._new()
        self.lines.append(f"{name} = {text}")
        return name

    def const(self, value, dt):
        return self.emit(f"arith.constant {const_literal(value, dt)}")

    def index(self, dim):
        return self.emit(f"linalg.index {dim} : index")

    def cast(self, x, src, dst):
        if src == dst:
            return x
        if is_float(src) and is_float(dst):
            op = "arith.extf" if bits(dst) > bits(src) else "arith.truncf"
            return self.emit(f"{op} {x} : {src} to {dst}")
        if is_float(dst):
            op = "arith.uitofp" if src == "i1" else "arith.sitofp"
            return self.emit(f"{op} {x} : {src} to {dst}")
        if dst == "i1":
            zero = self.const(0, src)
            if is_float(src):
                return self.emit(f"arith.cmpf une, {x}, {zero} : {src}")
            return self.emit(f"arith.cmpi ne, {x}, {zero} : {src}")
        if is_float(src):
            return self.emit(f"arith.fptosi {x} : {src} to {dst}")
        if bits(dst) > bits(src):
            op = "arith.extui" if src == "i1" else "arith.extsi"
            return self.emit(f"{op} {x} : {src} to {dst}")
        return self.emit(f"arith.trunci {x} : {src} to {dst}")

    def binary(self, kind, a, b, dt):
        f = is_float(dt)
        ops = {
            "add": ("arith.addf", "arith.addi"),
            "sub": ("arith.subf", "arith.subi"),
            "mul": ("arith.mulf", "arith.muli"),
            "div": ("arith.divf", "arith.divsi"),
            "max": ("arith.maximumf", "arith.maxsi"),
            "min": ("arith.minimumf", "arith.minsi"),
            "pow": ("math.powf", None),
            "and": (None, "arith.andi"),
            "or": (None, "arith.ori"),
            "xor": (None, "arith.xori"),
        }[kind]
        op = ops[0] if f else ops[1]
        if op is None:
            raise ValueError(f"{kind} on {dt}")
        return self.emit(f"{op} {a}, {b} : {dt}")

    def cmp(self, kind, a, b, dt):
        if is_float(dt):
            pred = {"eq": "oeq", "ne": "une", "lt": "olt", "le": "ole", "gt": "ogt",
                    "ge": "oge"}[kind]
            return self.emit(f"arith.cmpf {pred}, {a}, {b} : {dt}")
        pred = {"eq": "eq", "ne": "ne", "lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge"}[kind]
        if dt == "i1":
            pred = {"lt": "ult", "le": "ule", "gt": "ugt", "ge": "uge"}.get(kind, pred)
        return self.emit(f"arith.cmpi {pred}, {a}, {b} : {dt}")

    def select(self, c, a, b, dt):
        return self.emit(f"arith.select {c}, {a}, {b} : {dt}")

    def math(self, fn, x, dt):
        return self.emit(f"math.{fn} {x} : {dt}")

    def neg(self, x, dt):
        if is_float(dt):
            return self.emit(f"arith.negf {x} : {dt}")
        zero = self.const(0, dt)
        return self.emit(f"arith.subi {zero}, {x} : {dt}")

    def lnot(self, x, dt):
        ones = self.const(1 if dt == "i1" else -1, dt)
        return self.emit(f"arith.xori {x}, {ones} : {dt}")

    def extract(self, val, indices):
        return self.emit(f"tensor.extract {val.name}[{', '.join(indices)}] : {val.type}")

    def to_index(self, x, dt):
        return self.emit(f"arith.index_cast {x} : {dt} to index")


class Function:
    """Collects the ops of the step function as text."""

    def __init__(self):
        self.lines = []
        self.counter = 0

    def fresh(self, prefix="v"):
        self.counter += 1
        return f"%{prefix}{self.counter}"

    def op(self, text, loc, prefix="v"):
        """Emits a one-line op at the module path `loc`: its zshard.path
        attribute, and its location (debug information)."""
        name = self.fresh(prefix)
        self.lines.append(f"    {name} = {_with_path(text, loc)} loc({_loc(loc)})")
        return name

    def region_op(self, lines, loc):
        """Emits an op with regions written as `lines` (the first names its
        result, the last closes the region); the module path and the location
        go after the region."""
        self.lines += [f"    {line}" for line in lines[:-1]]
        attr = f" {{{_path_attr(loc)}}}" if loc else ""
        self.lines.append(f"    {lines[-1]}{attr} loc({_loc(loc)})")

    def op_results(self, text, loc, count, prefix="v"):
        """An op with `count` results; returns their names (`%v7#0`, ...)."""
        name = self.fresh(prefix)
        self.lines.append(f"    {name}:{count} = {_with_path(text, loc)} loc({_loc(loc)})")
        return [f"{name}#{i}" for i in range(count)]

    def empty(self, shape, dt, loc):
        return Val(self.op(f"tensor.empty() : {ttype(shape, dt)}", loc), shape, dt)

    def filled(self, shape, dt, value, loc):
        e = self.empty(shape, dt, loc)
        c = self.op(f"arith.constant {const_literal(value, dt)}", loc, "c")
        name = self.op(f"linalg.fill ins({c} : {dt}) outs({e.name} : {e.type}) -> {e.type}", loc)
        return Val(name, shape, dt)

    def generic(self, loc, ndims, iterators, inputs, outputs, body_fn):
        """Emits a linalg.generic.

        inputs: [(Val or View, exprs)] where exprs index x's view dims by loop
        dims (composed with the view's own map); outputs: [(init Val, exprs)];
        body_fn(body, in_args, out_args) returns the yielded values.
        Returns the result Vals.
        """
        ranges = {}
        for x, exprs in list(inputs) + list(outputs):
            for size, (k, st, off) in zip(x.shape, exprs):
                if k is not None and st == 1 and off == 0:
                    ranges.setdefault(k, size)
        maps, in_vals, in_types, captured = [], [], [], {}
        for i, (x, exprs) in enumerate(inputs):
            src = x.source
            composed = compose(x, exprs)
            pure_ok = all(k is None or not (st == 1 and off == 0) or ranges.get(k) == size
                          for size, (k, st, off) in zip(src.shape, composed))
            if not pure_ok:
                # Linalg infers loop ranges from operands indexed by a bare
                # loop dim, so a prefix slice cannot be an operand: read it
                # with tensor.extract in the body instead.
                captured[i] = (src, composed)
                continue
            maps.append(affine_map(ndims, composed))
            in_vals.append(src.name)
            in_types.append(src.type)
        for init, exprs in outputs:
            maps.append(affine_map(ndims, exprs))
        out_vals, out_types = [], []
        for init, exprs in outputs:
            out_vals.append(init.name)
            out_types.append(init.type)
        body = Body(self)
        in_args = []
        operand_args = []
        for i, (x, _) in enumerate(inputs):
            if i in captured:
                src, composed = captured[i]
                idx = []
                for k, st, off in composed:
                    if k is None:
                        idx.append(body.emit(f"arith.constant {int(off)} : index"))
                        continue
                    v = body.index(k)
                    if st != 1:
                        c = body.emit(f"arith.constant {int(st)} : index")
                        v = body.emit(f"arith.muli {v}, {c} : index")
                    if off:
                        c = body.emit(f"arith.constant {int(off)} : index")
                        v = body.emit(f"arith.addi {v}, {c} : index")
                    idx.append(v)
                in_args.append(body.extract(src, idx))
            else:
                a = self.fresh("in")
                operand_args.append((a, x.dt))
                in_args.append(a)
        out_args = [self.fresh("out") for _ in outputs]
        yields = body_fn(body, in_args, out_args)
        arg_decls = [f"{a}: {dt}" for a, dt in operand_args]
        arg_decls += [f"{a}: {init.dt}" for a, (init, _) in zip(out_args, outputs)]
        iters = ", ".join(f'"{i}"' for i in iterators)
        path = f"{_path_attr(loc)}, " if loc else ""
        head = f"linalg.generic {{{path}indexing_maps = [{', '.join(maps)}], iterator_types = [{iters}]}}"
        if in_vals:
            head += f" ins({', '.join(in_vals)} : {', '.join(in_types)})"
        head += f" outs({', '.join(out_vals)} : {', '.join(out_types)})"
        results = " -> " + (out_types[0] if len(out_types) == 1 else "(" + ", ".join(out_types) + ")")
        name = self.fresh("v")
        lhs = name if len(outputs) == 1 else f"{name}:{len(outputs)}"
        self.lines.append(f"    {lhs} = {head} {{")
        self.lines.append(f"    ^bb0({', '.join(arg_decls)}):")
        for line in body.lines:
            self.lines.append(f"      {line}")
        ydt = ", ".join(init.dt for init, _ in outputs)
        self.lines.append(f"      linalg.yield {', '.join(yields)} : {ydt}")
        self.lines.append(f"    }}{results} loc({_loc(loc)})")
        if len(outputs) == 1:
            return [Val(name, outputs[0][0].shape, outputs[0][0].dt)]
        return [Val(f"{name}#{i}", init.shape, init.dt) for i, (init, _) in enumerate(outputs)]


def _loc(path):
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _path_attr(path):
    """The zshard.path attribute of an op at module path `path`."""
    return f"zshard.path = {_loc(path)}"


def _with_path(text, path):
    """The one-line op `text` with its module path as a zshard.path attribute
    where its assembly format takes the attribute dictionary; the root path
    and constants (which take their users' paths) get none."""
    if not path or text.startswith("arith.constant"):
        return text
    attr = "{" + _path_attr(path) + "}"
    name, _, rest = text.partition(" ")
    if name.startswith("linalg."):
        # Named linalg ops: after the name, or after indexing_maps.
        if rest.startswith("indexing_maps"):
            i = rest.index(" ins(")
            return f"{name} {rest[:i]} {attr}{rest[i:]}"
        return f"{name} {attr} {rest}"
    # Declarative formats: the attribute dictionary before the first ` : `
    # outside brackets.
    depth = 0
    for i, c in enumerate(text):
        if c in "([{<":
            depth += 1
        elif c in ")]}" or (c == ">" and text[i - 1] != "-"):
            depth -= 1
        elif c == ":" and depth == 0 and text[i - 1] == " " and text[i + 1:i + 2] == " ":
            return f"{text[:i - 1]} {attr} {text[i:]}"
    raise ValueError(f"no place for the module path in: {text}")
