# expect: 4:.*split: at most one factor may be None
b0 = sch.get_block(name="matmul")
l1, l2, l3 = sch.get_loops(block=b0)
l4, l5 = sch.split(loop=l1, factors=[None, None])
