b0 = sch.get_sblock(name="T_matmul_NT", func_name="main")
l1, l2, l3 = sch.get_loops(block=b0)
sch.transform_block_layout(block=b0, index_map=lambda v0, v1, v2: (v2, v1, v0,))
