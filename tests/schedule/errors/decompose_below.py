# expect: 5:.*decompose_reduction: loop 'j' must be above every loop that feeds a reduction iter of block 'matmul', but loop 'k' is above it
b0 = sch.get_block(name="matmul")
l1, l2, l3 = sch.get_loops(block=b0)
sch.reorder(l3, l1)
b4 = sch.decompose_reduction(block=b0, loop=l2)
