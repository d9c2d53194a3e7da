b0 = sch.get_sblock(name="B", func_name="main")
b1 = sch.reindex_cache_write(block=b0, write_buffer_index=0, storage_scope="shared", index_map=lambda i, j: (i,))  # REFUSED
