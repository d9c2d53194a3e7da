# expect: 4:.*sample_perfect_tile: the decision \[1, 12\] has innermost factor 12, but max_innermost_factor is 8: the innermost factor must be at most 8
b0 = sch.get_block(name="matmul")
l1, l2, l3 = sch.get_loops(block=b0)
v4, v5 = sch.sample_perfect_tile(loop=l3, n=2, max_innermost_factor=8, decision=[1, 12])
