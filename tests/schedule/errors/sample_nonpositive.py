# expect: 4:.*sample_perfect_tile: factor 0 of the decision \[-4, -4\] is -4: every factor must be positive$
b0 = sch.get_block(name="matmul")
l1, l2, l3 = sch.get_loops(block=b0)
v4, v5 = sch.sample_perfect_tile(loop=l1, n=2, decision=[-4, -4])
