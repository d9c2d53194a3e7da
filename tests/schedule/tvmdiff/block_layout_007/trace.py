b0 = sch.get_sblock(name="PadInput", func_name="main")
l1, l2, l3, l4 = sch.get_loops(block=b0)
sch.transform_block_layout(block=b0, index_map=lambda v0, v1, v2, v3: (v3, v2, v0, v1,))
