b0 = sch.get_sblock(name="load_store", func_name="main")
b1 = sch.cache_read(block=b0, read_buffer_index=0, storage_scope="global")
