b0 = sch.get_sblock(name="B_outer", func_name="main")
b1 = sch.get_sblock(name="C", func_name="main")
l2, l3, l4, l5 = sch.get_loops(block=b1)
sch.compute_at(block=b0, loop=l3, preserve_unit_loops=True, index=-1)
