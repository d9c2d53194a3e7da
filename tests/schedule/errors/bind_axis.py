# expect: 4:.*bind: 'warp.x' is not a thread axis
b0 = sch.get_block(name="matmul")
l1, l2, l3 = sch.get_loops(block=b0)
sch.bind(loop=l1, thread_axis="warp.x")
