b0 = sch.get_sblock(name="B", func_name="main")
l1, l2, l3 = sch.get_loops(block=b0)
b4 = sch.blockize(target=l1, preserve_unit_iters=True)
