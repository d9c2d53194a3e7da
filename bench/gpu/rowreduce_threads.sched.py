# A row per block, the row's elements across 256 threads (coalesced), each
# thread's four partial results combined across the block by warp shuffles
# and shared memory.
b = sch.get_block("B")
i, j = sch.get_loops(b)
jo, ji = sch.split(j, [None, 256])
sch.reorder(i, ji, jo)
sch.bind(i, "blockIdx.x")
sch.bind(ji, "threadIdx.x")
sch.unroll(jo)
