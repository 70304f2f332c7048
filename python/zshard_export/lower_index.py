"""aten.index.Tensor with several index tensors (advanced indexing).

`x[i, j]` with integer tensors i and j broadcast together, as Hugging Face's
mask functions read a padding mask (`padding_mask[batch_idx, kv_idx]`). One
linalg.generic reads the index tensors through broadcasting indexing maps and
x with tensor.extract; torch's placement of the broadcast dimensions is
followed: where the indexed dimensions are adjacent, the broadcast dimensions
replace them; otherwise they come first.
"""

from .lower import _index_value


def index_several(L, x, indices):
    """x[indices] (torch semantics; None entries keep their dimension)."""
    r = len(x.shape)
    indices = list(indices) + [None] * (r - len(indices))
    present = [d for d, t in enumerate(indices) if t is not None]
    idx = {d: L.get(indices[d]) for d in present}
    if any(t.dt == "i1" for t in idx.values()):
        L.fail("unsupported op aten.index.Tensor with a boolean mask (data-dependent shape)")
    q = max(len(t.shape) for t in idx.values())
    bshape = [1] * q
    for t in idx.values():
        for j, s in enumerate(t.shape):
            k = q - len(t.shape) + j
            bshape[k] = max(bshape[k], s)
    adjacent = present == list(range(present[0], present[-1] + 1))
    first = present[0] if adjacent else 0
    rest = [d for d in range(r) if d not in idx]
    # Output dim of each kept x dim; the broadcast dims are first..first+q.
    out_dim, pos = {}, 0
    for d in rest:
        if pos == first:
            pos += q
        out_dim[d] = pos
        pos += 1
    shape = L.out_shape()
    n = len(shape)
    if n != len(rest) + q:
        L.fail("internal error lowering aten.index.Tensor: unexpected result rank")
    inputs = []
    for d in present:
        t = idx[d]
        exprs = []
        for j, s in enumerate(t.shape):
            k = first + q - len(t.shape) + j
            exprs.append((k, 1, 0) if s == shape[k] else (None, 1, 0))
        inputs.append((t, exprs))
    src = L.mat(x)
    out = L.fn.empty(shape, x.dt, L.loc)

    def body(b, ins, outs):
        values = dict(zip(present, ins))
        where = [_index_value(b, values[d], idx[d].dt, x.shape[d]) if d in idx
                 else b.index(out_dim[d]) for d in range(r)]
        return [b.extract(src, where)]
    return L.fn.generic(L.loc, n, ["parallel"] * n, inputs,
                        [(out, [(i, 1, 0) for i in range(n)])], body)[0]
