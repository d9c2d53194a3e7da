b0 = sch.get_sblock(name="B", func_name="main")
l1, l2 = sch.get_loops(block=b0)
l3, l4 = sch.loop_partition(loop=l2, factors=[None, 1], preserve_unit_iters=True)
