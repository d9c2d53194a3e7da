# A GPU design space for the elementwise programs: threads per block and
# elements per thread sampled.
b = sch.get_block("C")
i, j = sch.get_loops(b)
f = sch.fuse(i, j)
v0, v1, v2 = sch.sample_perfect_tile(f, n=3, max_innermost_factor=1024)
bx, u, tx = sch.split(f, [v0, v1, v2])
sch.bind(bx, "blockIdx.x")
sch.bind(tx, "threadIdx.x")
sch.unroll(u)
