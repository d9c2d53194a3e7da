# expect: 4:.*merge: loops 'i' and 'j' do not lie in different statements of one sequence
b0 = sch.get_block(name="matmul")
l1, l2, l3 = sch.get_loops(block=b0)
l4 = sch.merge(l1, l2)
