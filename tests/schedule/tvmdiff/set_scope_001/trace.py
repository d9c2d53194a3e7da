b0 = sch.get_sblock(name="T_matmul_NN", func_name="main")
l1, l2, l3 = sch.get_loops(block=b0)
sch.set_scope(block=b0, buffer_index=0, storage_scope="global")
