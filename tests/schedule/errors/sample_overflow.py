# expect: 4:.*sample_perfect_tile: the decision \[4611686018427387904, 4\] overflows 64 bits, but loop 'i' has extent 16: the factors must multiply to 16
b0 = sch.get_block(name="matmul")
l1, l2, l3 = sch.get_loops(block=b0)
v4, v5 = sch.sample_perfect_tile(loop=l1, n=2, decision=[4611686018427387904, 4])
