# expect: 3:.*get_loops has no parameter 'blok'
b0 = sch.get_block(name="matmul")
l1, l2, l3 = sch.get_loops(blok=b0)
