# expect: 4:.*argument 'index' must be
b0 = sch.get_block(name="matmul")
l1, l2, l3 = sch.get_loops(block=b0)
sch.compute_at(block=b0, loop=l1, index="x")
