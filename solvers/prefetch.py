"""``prefetch(array, index)``: a hint to load ``array[index]`` into cache (LLVM's prefetch).

Row-sampling kernels draw their coordinates a few steps ahead and prefetch the rows they
will touch, so that the random access to A overlaps with the current step's work.
"""

from __future__ import annotations

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def prefetch(typingctx, array, index):
    """Prefetch ``array[index]`` for reading (no bounds check, never faults)."""
    if not isinstance(array, types.Array) or not isinstance(index, types.Integer):
        return None
    sig = types.void(array, index)

    def codegen(context, builder, signature, args):
        array_type = signature.args[0]
        ary = context.make_array(array_type)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(
            context, builder, array_type, ary, [args[1]], wraparound=False
        )
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0i8")
        # rw = 0 (read), locality = 3 (keep in all cache levels), cache type = 1 (data)
        builder.call(
            fn,
            [
                builder.bitcast(ptr, i8p),
                ir.Constant(i32, 0),
                ir.Constant(i32, 3),
                ir.Constant(i32, 1),
            ],
        )
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True, _nrt=False)
def prefetch_span(array, start, end):
    """Prefetch ``array[start:end]``, one hint per 64-byte cache line (the last element
    included, for a span that straddles one more line than its length fills)."""
    stride = max(1, 64 // array.itemsize)
    for k in range(start, end, stride):
        prefetch(array, k)
    if end > start:
        prefetch(array, end - 1)


@njit(cache=True, _nrt=False)
def prefetch_row(indptr, indices, values, i):
    """Prefetch row ``i`` of CSR arrays: its indices and values (``indptr[i]`` is read, so
    prefetch it a few steps earlier)."""
    row, row_end = indptr[i], indptr[i + 1]
    prefetch_span(indices, row, row_end)
    prefetch_span(values, row, row_end)


@njit(cache=True, _nrt=False)
def prefetch_draw(indptr, indices, values, ahead, half):
    """What a row-sampling kernel prefetches of A for its draws ahead: ``indptr`` of draw
    ``ahead`` (read when that draw is ``half``) and the row of draw ``half``, which it
    reads a few steps later."""
    prefetch(indptr, ahead)
    prefetch_row(indptr, indices, values, half)
