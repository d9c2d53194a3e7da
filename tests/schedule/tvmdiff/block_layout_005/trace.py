b0 = sch.get_sblock(name="adaptive_pool_sum", func_name="main")
l1, l2, l3, l4, l5, l6 = sch.get_loops(block=b0)
sch.transform_block_layout(block=b0, index_map=lambda v0, v1, v2, v3, v4, v5: (v2, v1, v4, v3, v0, v5,))
