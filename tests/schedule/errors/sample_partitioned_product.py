# expect: 4:.*sample_partitioned_tile: the decision \[2, 3, 4\] multiplies to 24, but loop 'k' has extent 12: the factors must multiply to 12
b0 = sch.get_block(name="matmul")
l1, l2, l3 = sch.get_loops(block=b0)
v4, v5, v6 = sch.sample_partitioned_tile(loop=l3, n=3, partition_pos=1, innerpart_factor=2, decision=[2, 3, 4])
