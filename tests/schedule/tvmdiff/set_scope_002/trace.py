b0 = sch.get_sblock(name="C", func_name="main")
l1, = sch.get_loops(block=b0)
sch.set_scope(block=b0, buffer_index=0, storage_scope="global")
