# Four elements per thread, each unrolled step coalesced across the block.
b = sch.get_block("B")
i, j = sch.get_loops(b)
f = sch.fuse(i, j)
bx, u, tx = sch.split(f, [None, 4, 256])
sch.bind(bx, "blockIdx.x")
sch.bind(tx, "threadIdx.x")
sch.unroll(u)
