# expect: 3:.*sample_compute_location: the decision 0 is not a compute location of block 'matmul': it must be one of -1 \(the root\)$
b0 = sch.get_block(name="matmul")
l1 = sch.sample_compute_location(block=b0, decision=0)
sch.compute_at(block=b0, loop=l1)
