# expect: 4:.*rfactor: factor_axis -4 is out of range: buffer 'C' has 2 dimension\(s\), so it must lie in \[-3, 2\]
b0 = sch.get_block(name="matmul")
l1, l2, l3 = sch.get_loops(block=b0)
b4 = sch.rfactor(loop=l3, factor_axis=-4)
