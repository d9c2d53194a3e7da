b0 = sch.get_sblock(name="B", func_name="main")
l1, l2 = sch.get_loops(block=b0)
b3 = sch.read_at(loop=l2, block=b0, read_buffer_index=0, storage_scope="local")
