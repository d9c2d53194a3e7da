b0 = sch.get_sblock(name="placeholder_red_temp", func_name="main")
l1, l2 = sch.get_loops(block=b0)
b3 = sch.cache_write(block=b0, write_buffer_index=1, storage_scope="local")
