b0 = sch.get_sblock(name="C", func_name="main")
l1, l2, l3 = sch.get_loops(block=b0)
b4 = sch.cache_write(block=b0, write_buffer_index=0, storage_scope="local")
