b0 = sch.get_sblock(name="B", func_name="main")
b1 = sch.reindex(block=b0, buffer=("write", 0))
