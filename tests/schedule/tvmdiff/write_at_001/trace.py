b0 = sch.get_sblock(name="B", func_name="main")
l1, l2, l3, l4 = sch.get_loops(block=b0)
b5 = sch.write_at(loop=l1, block=b0, write_buffer_index=0, storage_scope="shared")
