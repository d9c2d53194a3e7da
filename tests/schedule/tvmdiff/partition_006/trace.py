b0 = sch.get_sblock(name="pad_temp", func_name="main")
l1, l2, l3 = sch.get_loops(block=b0)
l4, l5, l6 = sch.loop_partition(loop=l2, factors=[2, 1, None], preserve_unit_iters=True)
