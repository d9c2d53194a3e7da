b0 = sch.get_sblock(name="C", func_name="main")
l1, l2 = sch.get_loops(block=b0)
b3 = sch.blockize(target=l2, preserve_unit_iters=False)
