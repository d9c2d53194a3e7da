# Tensor cores through wmma: a 128 x 128 tile of C per block of four warps
# (threadIdx.y), each warp a 64 x 64 tile as 4 x 4 accumulator fragments,
# k in steps of 64 through shared memory, 16 at a time through A and B
# fragments. threadIdx.x is the warp's 32 lanes: the copies into shared
# memory are spread over them, and every wmma call is made by all of them.
# The loops over fragments are unrolled: CUDA keeps a fragment array in
# registers only where every index into it is a constant.
b = sch.get_block("C")
i, j, k = sch.get_loops(b)
i0, i1, i2, i3 = sch.split(i, [None, 2, 4, 16])
j0, j1, j2, j3 = sch.split(j, [None, 2, 4, 16])
k0, k1, k2 = sch.split(k, [None, 4, 16])
sch.reorder(i0, j0, i1, j1, k0, k1, i2, j2, i3, j3, k2)
sch.bind(i0, "blockIdx.y")
sch.bind(j0, "blockIdx.x")
w = sch.fuse(i1, j1)
sch.bind(w, "threadIdx.y")
# The accumulators, stored fragment by fragment when the warp is done.
acc = sch.cache_write(b, 0, "wmma.accumulator")
sch.reverse_compute_at(acc, w)
_, _, _, s0, s1 = sch.get_loops(acc)
s00, s01 = sch.split(s0, [None, 16])
s10, s11 = sch.split(s1, [None, 16])
sch.reorder(s00, s10, s01, s11)
init = sch.decompose_reduction(b, k0)
# A and B tiles into shared memory, by all 128 threads.
a_sh = sch.cache_read(b, 1, "shared")
sch.compute_at(a_sh, k0)
b_sh = sch.cache_read(b, 2, "shared")
sch.compute_at(b_sh, k0)
# Each thread copies 8 halves (16 bytes) at a time: the CUDA backend moves
# a vectorized copy it proves aligned as one vector. Each row is padded by
# 8 halves past a multiple of 32, so that the fragment loads' rows fall in
# different banks of shared memory.
_, _, _, _, r0, r1 = sch.get_loops(a_sh)
f = sch.fuse(r0, r1)
_, ty, tx, v = sch.split(f, [None, 4, 32, 8])
sch.bind(ty, "threadIdx.y")
sch.bind(tx, "threadIdx.x")
sch.vectorize(v)
sch.storage_align(a_sh, 0, 0, 32, 8)
_, _, _, _, r0, r1 = sch.get_loops(b_sh)
f = sch.fuse(r0, r1)
_, ty, tx, v = sch.split(f, [None, 4, 32, 8])
sch.bind(ty, "threadIdx.y")
sch.bind(tx, "threadIdx.x")
sch.vectorize(v)
sch.storage_align(b_sh, 0, 0, 32, 8)
# Fragments of A and B for each 16-deep step of k.
a_fr = sch.cache_read(b, 1, "wmma.matrix_a")
sch.compute_at(a_fr, k1)
_, _, _, _, _, a0, a1 = sch.get_loops(a_fr)
a00, a01 = sch.split(a0, [None, 16])
b_fr = sch.cache_read(b, 2, "wmma.matrix_b")
sch.compute_at(b_fr, k1)
_, _, _, _, _, b0, b1 = sch.get_loops(b_fr)
b10, b11 = sch.split(b1, [None, 16])
sch.reorder(b10, b0, b11)
sch.tensorize(a01, "wmma_load_16x16x16_f16_a_shared")
sch.tensorize(b0, "wmma_load_16x16x16_f16_b_shared")
_, _, _, fi, fj, f0, _ = sch.get_loops(init)
sch.tensorize(f0, "wmma_fill_16x16x16_f32")
sch.tensorize(i3, "wmma_sync_16x16x16_f16f16f32")
sch.tensorize(s01, "wmma_store_16x16x16_f32_global")
sch.unroll(fi)
sch.unroll(fj)
sch.unroll(a00)
sch.unroll(b10)
sch.unroll(i2)
sch.unroll(j2)
sch.unroll(k1)
sch.unroll(s00)
sch.unroll(s10)
