# expect: 4:.*the product of the factors \(6\) is less than the extent 16 of loop 'i'
b0 = sch.get_block(name="matmul")
l1, l2, l3 = sch.get_loops(block=b0)
l4, l5 = sch.split(loop=l1, factors=[2, 3])
