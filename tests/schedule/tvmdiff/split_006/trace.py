b0 = sch.get_sblock(name="PadInput", func_name="main")
l1, l2, l3, l4 = sch.get_loops(block=b0)
l5, l6 = sch.split(loop=l2, factors=[None, 9], preserve_unit_iters=False, disable_predication=False)
