b0 = sch.get_sblock(name="A_red", func_name="main")
l1, l2 = sch.get_loops(block=b0)
sch.reorder_block_iter_var(block=b0, new_order=[1, 0])
b3 = sch.get_sblock(name="A_red", func_name="main")
l4, l5 = sch.get_loops(block=b3)
sch.transform_block_layout(block=b3, index_map=lambda v0, v1: (v1, v0,))  # REFUSED
