# expect: 4:.*fuse: loop 'k' is not the only child of loop 'i'
b0 = sch.get_block(name="matmul")
l1, l2, l3 = sch.get_loops(block=b0)
l4 = sch.fuse(l1, l3)
