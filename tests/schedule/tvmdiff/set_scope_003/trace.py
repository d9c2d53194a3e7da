b0 = sch.get_sblock(name="B", func_name="main")
sch.set_scope(block=b0, buffer_index=0, storage_scope="shared")
