b0 = sch.get_sblock(name="decode", func_name="main")
l1, l2 = sch.get_loops(block=b0)
l3, l4, l5 = sch.loop_partition(loop=l2, factors=[16, 8, None], preserve_unit_iters=True)
