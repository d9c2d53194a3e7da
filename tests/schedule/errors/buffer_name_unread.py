# expect: 3:20: error: block 'matmul' reads no buffer named 'Q'
b0 = sch.get_block(name="matmul")
sch.cache_read(b0, "Q", "local")
