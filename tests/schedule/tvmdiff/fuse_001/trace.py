b0 = sch.get_sblock(name="cache", func_name="main")
l1, l2, l3, l4 = sch.get_loops(block=b0)
l5 = sch.fuse(l3, l4, preserve_unit_iters=False)
