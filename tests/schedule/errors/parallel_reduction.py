# expect: 4:.*parallel: cannot parallelize loop 'k': iter 'vk' of block 'matmul' is a reduction iter
b0 = sch.get_block(name="matmul")
l1, l2, l3 = sch.get_loops(block=b0)
sch.parallel(loop=l3)
