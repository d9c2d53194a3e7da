# expect: 3:.*get_loops gives 3 outputs here, but 2 names are given
b0 = sch.get_block(name="matmul")
l1, l2 = sch.get_loops(block=b0)
