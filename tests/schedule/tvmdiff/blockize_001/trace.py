b0 = sch.get_sblock(name="pool_avg", func_name="main")
l1, l2, l3, l4 = sch.get_loops(block=b0)
b5 = sch.blockize(target=l2, preserve_unit_iters=True)
