# expect: 2:.*undefined variable 'b9'
l1, l2, l3 = sch.get_loops(block=b9)
