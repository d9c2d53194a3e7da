# One thread per row, rows of a warp side by side; the row loop unrolled by 8.
b = sch.get_block("B")
i, j = sch.get_loops(b)
bx, tx = sch.split(i, [None, 128])
j0, j1 = sch.split(j, [None, 8])
sch.bind(bx, "blockIdx.x")
sch.bind(tx, "threadIdx.x")
sch.unroll(j1)
