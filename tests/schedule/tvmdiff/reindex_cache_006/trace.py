b0 = sch.get_sblock(name="C", func_name="main")
b1 = sch.reindex_cache_read(block=b0, read_buffer_index=0, storage_scope="shared", index_map=lambda v0: (v0,))  # REFUSED
