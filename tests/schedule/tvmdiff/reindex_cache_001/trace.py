b0 = sch.get_sblock(name="C", func_name="main")
l1, l2, l3 = sch.get_loops(block=b0)
b4 = sch.reindex_cache_write(block=b0, write_buffer_index=0, storage_scope="shared", index_map=lambda v0, v1, v2: (v0, v1,))
