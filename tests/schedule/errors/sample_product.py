# expect: 4:.*sample_perfect_tile: the decision \[5, 5\] multiplies to 25, but loop 'i' has extent 16: the factors must multiply to 16
b0 = sch.get_block(name="matmul")
l1, l2, l3 = sch.get_loops(block=b0)
v4, v5 = sch.sample_perfect_tile(loop=l1, n=2, max_innermost_factor=16, decision=[5, 5])
