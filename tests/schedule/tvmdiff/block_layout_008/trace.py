b0 = sch.get_sblock(name="B", func_name="main")
l1, l2 = sch.get_loops(block=b0)
sch.transform_block_layout(block=b0, index_map=lambda v0, v1: (v1, v0,))
