# expect: 4:.*split: every constant factor must be positive, but the factor at position 1 is -4
b0 = sch.get_block(name="matmul", func_name="main")
l1, l2, l3 = sch.get_loops(block=b0)
l4, l5 = sch.split(loop=l1, factors=[None, -4])
