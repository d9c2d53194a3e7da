# expect: 4:.*bind: cannot bind loop 'k': iter 'vk' of block 'matmul' is a reduction iter
b0 = sch.get_block(name="matmul")
l1, l2, l3 = sch.get_loops(block=b0)
sch.bind(loop=l3, thread_axis="blockIdx.x")
