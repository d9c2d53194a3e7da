# expect: 5:.*blockize: block 'matmul' has a predicate that does not divide into the loops outside and inside the new block
b0 = sch.get_block(name="matmul")
l1, l2, l3 = sch.get_loops(block=b0)
l4, l5 = sch.split(loop=l1, factors=[None, 5])
b6 = sch.blockize(target=l5)
