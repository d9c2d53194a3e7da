# expect: 4:.*sample_perfect_tile: the decision has 2 factors, but n is 3
b0 = sch.get_block(name="matmul")
l1, l2, l3 = sch.get_loops(block=b0)
v4, v5, v6 = sch.sample_perfect_tile(loop=l1, n=3, max_innermost_factor=16, decision=[4, 4])
