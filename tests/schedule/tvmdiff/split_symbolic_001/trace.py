b0 = sch.get_sblock(name="D", func_name="main")
l1, l2 = sch.get_loops(block=b0)
l3, l4, l5 = sch.split(loop=l1, factors=[5, None, 2], preserve_unit_iters=True, disable_predication=False)
