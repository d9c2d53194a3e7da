# expect: 4:.*rfactor: loop 'i' feeds a spatial iter of block 'matmul'; rfactor needs a loop that only reduction iters use
b0 = sch.get_block(name="matmul")
l1, l2, l3 = sch.get_loops(block=b0)
b4 = sch.rfactor(loop=l1, factor_axis=0)
