b0 = sch.get_sblock(name="B", func_name="main")
l1, l2, l3 = sch.get_loops(block=b0)
v4, v5, v6 = sch.sample_perfect_tile(loop=l1, n=3, max_innermost_factor=16, decision=[1, 2, 2])
l7, l8, l9 = sch.split(loop=l1, factors=[v4, v5, v6], preserve_unit_iters=True, disable_predication=False)
