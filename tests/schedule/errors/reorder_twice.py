# expect: 4:.*reorder: loop 'i' is given twice
b0 = sch.get_block(name="matmul")
l1, l2, l3 = sch.get_loops(block=b0)
sch.reorder(l1, l1)
