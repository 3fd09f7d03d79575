"""Loops over the K classes of a row of a K-class iterate, as explicit vector code.

A K-class kernel keeps its iterate C-ordered, X of shape (n_features, K) or A·X of shape
(n_samples, K), so the K values of one feature (or sample) lie side by side: one read of a
non-zero of A serves the K classes. Numba's loop vectorizer vectorizes a loop over those K
values, but such a loop nests inside the loop over the non-zeros of a row (or column) of
A, so every non-zero restarts it (trip-count and alias checks, a remainder) and reloads and
stores the K running sums. :func:`class_dot` and :func:`class_axpy` are written in LLVM IR
instead (numba ``intrinsic``), the sums kept in vector registers over the whole row of A:
4-wide vectors, up to ``BLOCK`` classes a pass, the last vector masked (no read or write
past the row). news20 (K = 20, rows in random order): the pass of K margins in 7.4 ms
against 12.5 ms for the nested loops, a binary pass 3.0 ms (best of 9); 8-wide vectors
were no faster (the rows of X come from memory: bench/run_ovr_epoch.py).

The arithmetic is the scalar loop's, in the same order — a product, then a sum, never
fused — so a class's values are bitwise those of a loop over that class alone: no
fast-math is needed for the speed (it could not change a certificate, which is computed
from the iterate afresh, but it would part a one-vs-rest run from the binary runs it
equals). :func:`exp_lanes` is an exp that a loop over the classes vectorizes.
"""

from __future__ import annotations

import math

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

WIDTH = 4  # doubles a vector
VECTORS = 8  # vectors a pass
BLOCK = WIDTH * VECTORS  # classes a pass

_F64 = ir.DoubleType()
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_VEC = ir.VectorType(_F64, WIDTH)
_MASK = ir.VectorType(ir.IntType(1), WIDTH)
_LANES = ir.Constant(ir.VectorType(_I64, WIDTH), list(range(WIDTH)))


def _splat(builder, value, vector_type):
    """``value`` in every lane of a vector of ``vector_type``."""
    one = builder.insert_element(
        ir.Constant(vector_type, ir.Undefined), value, ir.Constant(_I32, 0)
    )
    return builder.shuffle_vector(one, one, ir.Constant(ir.VectorType(_I32, WIDTH), [0] * WIDTH))


def _pointer(builder, data, index):
    """A vector pointer to ``data[index]``."""
    return builder.bitcast(builder.gep(data, [index]), _VEC.as_pointer())


def _masked(builder, name, returns, args):
    """A call of LLVM's masked load or store of 4 doubles."""
    arg_types = [a.type for a in args]
    fn = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(returns, arg_types), f"llvm.masked.{name}.v4f64.p0"
    )
    return builder.call(fn, args)


def _load(builder, pointer, mask):
    if mask is None:
        return builder.load(pointer, align=8)
    zero = ir.Constant(_VEC, [0.0] * WIDTH)
    return _masked(builder, "load", _VEC, [pointer, ir.Constant(_I32, 8), mask, zero])


def _store(builder, value, pointer, mask):
    if mask is None:
        builder.store(value, pointer, align=8)
    else:
        _masked(builder, "store", ir.VoidType(), [value, pointer, ir.Constant(_I32, 8), mask])


def _tail_mask(builder, lanes, vectors):
    """The lanes of the last of ``vectors`` vectors that hold one of ``lanes`` classes."""
    left = builder.sub(lanes, ir.Constant(_I64, WIDTH * (vectors - 1)))
    return builder.icmp_signed("<", _LANES, _splat(builder, left, ir.VectorType(_I64, WIDTH)))


def _index(builder, indices, k):
    """indices[k] as an int64."""
    index = builder.load(builder.gep(indices, [k]))
    return builder.sext(index, _I64) if index.type.width < 64 else index


def _by_vectors(builder, lanes, emit):
    """Run ``emit(vectors)``, the code for a pass over that many vectors, for the
    ⌈lanes/WIDTH⌉ vectors that hold ``lanes`` (1 to BLOCK) classes: a switch over the
    VECTORS cases."""
    vectors = builder.sdiv(
        builder.add(lanes, ir.Constant(_I64, WIDTH - 1)), ir.Constant(_I64, WIDTH)
    )
    done = builder.append_basic_block("classes.done")
    switch = builder.switch(vectors, done)
    for count in range(1, VECTORS + 1):
        case = builder.append_basic_block(f"classes.{count}")
        switch.add_case(ir.Constant(_I64, count), case)
        builder.position_at_end(case)
        emit(count)
        builder.branch(done)
    builder.position_at_end(done)


def _arrays(context, builder, signature, args, which):
    """The data pointers of the array arguments at positions ``which``."""
    return [context.make_array(signature.args[a])(context, builder, args[a]).data for a in which]


@intrinsic
def _dot(typingctx, indices, values, start, end, flat, width, offset, lanes, out):
    """out[offset + c] = Σₖ values[k]·flat[indices[k]·width + offset + c] for c < lanes
    (≤ BLOCK), k in [start, end)."""
    sig = types.void(indices, values, start, end, flat, width, offset, lanes, out)

    def codegen(context, builder, signature, args):
        index_data, value_data, flat_data, out_data = _arrays(
            context, builder, signature, args, (0, 1, 4, 8)
        )
        start, end, width, offset, lanes = args[2], args[3], args[5], args[6], args[7]
        zero = ir.Constant(_VEC, [0.0] * WIDTH)
        step = ir.Constant(_I64, 1)

        def emit(vectors):
            masks = [None] * (vectors - 1) + [_tail_mask(builder, lanes, vectors)]
            sums = [cgutils.alloca_once_value(builder, zero) for _ in range(vectors)]
            with cgutils.for_range_slice(builder, start, end, step, inc=True) as (k, _):
                j = _index(builder, index_data, k)
                value = _splat(builder, builder.load(builder.gep(value_data, [k])), _VEC)
                base = builder.add(builder.mul(j, width), offset)
                for g in range(vectors):
                    at = builder.add(base, ir.Constant(_I64, WIDTH * g))
                    x = _load(builder, _pointer(builder, flat_data, at), masks[g])
                    product = builder.fmul(value, x)
                    builder.store(builder.fadd(builder.load(sums[g]), product), sums[g])
            for g in range(vectors):
                at = builder.add(offset, ir.Constant(_I64, WIDTH * g))
                _store(builder, builder.load(sums[g]), _pointer(builder, out_data, at), masks[g])

        _by_vectors(builder, lanes, emit)
        return context.get_dummy_value()

    return sig, codegen


def _axpy(soft: bool):
    """The pass of :func:`class_axpy` (``soft``: of :func:`class_axpy_soft`)."""

    @intrinsic
    def axpy(typingctx, indices, values, start, end, z, x, width, offset, lanes, coef, penalty):
        sig = types.void(indices, values, start, end, z, x, width, offset, lanes, coef, penalty)

        def codegen(context, builder, signature, args):
            index_data, value_data, z_data, x_data, coef_data = _arrays(
                context, builder, signature, args, (0, 1, 4, 5, 9)
            )
            start, end, width, offset, lanes = args[2], args[3], args[6], args[7], args[8]
            zero = ir.Constant(_VEC, [0.0] * WIDTH)
            step = ir.Constant(_I64, 1)
            if soft:
                l1, inv_l2 = (builder.extract_value(args[10], q) for q in (0, 1))
                threshold = _splat(builder, l1, _VEC)
                below = builder.fsub(zero, threshold)
                scale = _splat(builder, inv_l2, _VEC)

            def emit(vectors):
                coefs, writes, reads = [], [], []
                for g in range(vectors):  # the coefficients, and the lanes that move
                    read = _tail_mask(builder, lanes, vectors) if g == vectors - 1 else None
                    at = builder.add(offset, ir.Constant(_I64, WIDTH * g))
                    c = _load(builder, _pointer(builder, coef_data, at), read)
                    moves = builder.fcmp_unordered("!=", c, zero)
                    coefs.append(c)
                    writes.append(moves if read is None else builder.and_(moves, read))
                    reads.append(read)
                with cgutils.for_range_slice(builder, start, end, step, inc=True) as (k, _):
                    j = _index(builder, index_data, k)
                    value = _splat(builder, builder.load(builder.gep(value_data, [k])), _VEC)
                    base = builder.add(builder.mul(j, width), offset)
                    for g in range(vectors):
                        at = builder.add(base, ir.Constant(_I64, WIDTH * g))
                        target = _pointer(builder, z_data if soft else x_data, at)
                        product = builder.fmul(coefs[g], value)
                        moved = builder.fadd(_load(builder, target, reads[g]), product)
                        _store(builder, moved, target, writes[g])
                        if soft:  # x = soft(z, l1)/l2, soft(z, t) = z − min(max(z, −t), t),
                            # max and min as Numba's (penalties.soft_threshold): bitwise
                            high = builder.select(
                                builder.fcmp_ordered(">", below, moved), below, moved
                            )
                            low = builder.select(
                                builder.fcmp_ordered("<", threshold, high), threshold, high
                            )
                            shrunk = builder.fmul(builder.fsub(moved, low), scale)
                            _store(builder, shrunk, _pointer(builder, x_data, at), writes[g])

            _by_vectors(builder, lanes, emit)
            return context.get_dummy_value()

        return sig, codegen

    return axpy


_axpy_plain = _axpy(soft=False)
_axpy_soft = _axpy(soft=True)


@njit(cache=True, _nrt=False)
def class_dot(indices, values, start, end, flat, width, out):
    """out[c] = Σₖ values[k]·flat[indices[k]·width + c] for the ``width`` classes c, k in
    [start, end): the K margins Xᵀaᵢ of a row aᵢ of A (CSR [start, end), ``flat`` = X's
    values, ``width`` = K), or the K entries of a column's Σᵢ Aᵢⱼ·G[i, :]. Sums in the order
    of k, each term a product then a sum (bitwise a loop over one class)."""
    for offset in range(0, width, BLOCK):
        _dot(indices, values, start, end, flat, width, offset, min(BLOCK, width - offset), out)


@njit(cache=True, _nrt=False)
def class_axpy(indices, values, start, end, flat, width, coef):
    """flat[indices[k]·width + c] += coef[c]·values[k] for k in [start, end) and the classes
    c with coef[c] ≠ 0: the others are neither written nor changed (not even −0.0 to
    +0.0). X += aᵢ·coefᵀ along a row of A, or A·X += A_:ⱼ·coefᵀ along a column."""
    for offset in range(0, width, BLOCK):
        lanes = min(BLOCK, width - offset)
        _axpy_plain(indices, values, start, end, flat, flat, width, offset, lanes, coef, (0.0, 0.0))


@njit(cache=True, _nrt=False)
def class_axpy_soft(indices, values, start, end, z, x, width, coef, penalty):
    """z[r] += coef[c]·values[k] and x[r] = soft(z[r], l1)/l2, r = indices[k]·width + c,
    for k in [start, end) and the classes c with coef[c] ≠ 0 (the others untouched):
    x = ∇g*(z) of the elastic net ``penalty`` = (l1, l2) kept along a row of A."""
    l1, l2 = penalty
    for offset in range(0, width, BLOCK):
        lanes = min(BLOCK, width - offset)
        _axpy_soft(indices, values, start, end, z, x, width, offset, lanes, coef, (l1, 1.0 / l2))


@intrinsic
def _double_of_bits(typingctx, bits):
    """The float64 whose IEEE bits are the int64 ``bits``."""
    if not isinstance(bits, types.Integer) or bits.bitwidth != 64:
        return None
    sig = types.float64(bits)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], _F64)

    return sig, codegen


_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01  # ln 2 in its high 32 bits: k·_LN2_HI is exact
_LN2_LO = 1.90821492927058770002e-10
_EXP_MIN = -708.0  # below: e^x < 3.3e-308, taken as 0 (2^k stays normal: k ≥ −1021)
_EXP_MAX = 709.782712893384  # above: +inf
# 1/m! for m = 12, 11, ..., 1, 0: e^r's Taylor series, exact to < 1 ulp for |r| ≤ ln2/2
_TAYLOR = tuple(1.0 / math.factorial(m) for m in range(12, -1, -1))


@njit(cache=True, _nrt=False, fastmath={"contract"})
def exp_lanes(x):
    """e^x within 2 ulp, in code a loop over classes vectorizes (a libm call does not: 5.6 ns
    an exp from a compiled loop, ~1 ns here on AVX2): x = k·ln 2 + r, |r| ≤ ln2/2, e^r by its
    Taylor polynomial of degree 12 (fused multiply-adds) and 2^k from its exponent bits
    (Cody & Waite's reduction). 0 below −708 (e^x < 3.3e−308: no subnormal results), +inf
    above 709.78, NaN for NaN. A kernel's own iterate may follow it; a certificate never
    does (trace points evaluate the loss with numpy's exp)."""
    clamped = min(max(x, _EXP_MIN), _EXP_MAX)
    k = math.floor(clamped * _LOG2E + 0.5)
    r = (clamped - k * _LN2_HI) - k * _LN2_LO
    p = _TAYLOR[0]
    for m in range(1, 13):
        p = p * r + _TAYLOR[m]
    scaled = (p + p) * _double_of_bits((int(k) + 1022) << 52)  # p·2^k, k up to 1024
    if x < _EXP_MIN:
        return 0.0
    if x > _EXP_MAX:
        return math.inf
    return scaled if x == x else x  # NaN: k's conversion was undefined
