b0 = sch.get_sblock(name="A_shared", func_name="main")
l1, l2 = sch.get_loops(block=b0)
b3 = sch.cache_read(block=b0, read_buffer_index=0, storage_scope="global")
