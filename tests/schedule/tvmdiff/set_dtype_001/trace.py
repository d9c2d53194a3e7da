b0 = sch.get_sblock(name="T_softmax_norm", func_name="main")
l1, l2 = sch.get_loops(block=b0)
sch.unsafe_set_dtype(block=b0, buffer_index=0, dtype="float32")
