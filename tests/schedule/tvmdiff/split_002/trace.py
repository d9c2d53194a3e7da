b0 = sch.get_sblock(name="conv", func_name="main")
l1, l2, l3, l4, l5, l6, l7 = sch.get_loops(block=b0)
l8, l9 = sch.split(loop=l4, factors=[None, 56], preserve_unit_iters=False, disable_predication=False)
