b0 = sch.get_sblock(name="B", func_name="main")
sch.unsafe_set_dtype(block=b0, buffer_index=0, dtype="float16")
