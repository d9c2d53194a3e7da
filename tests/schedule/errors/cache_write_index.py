# expect: 3:.*cache_write: block 'matmul' has 1 write regions; write_buffer_index 3 is not in \[0, 1\)
b0 = sch.get_block(name="matmul")
b1 = sch.cache_write(block=b0, write_buffer_index=3, storage_scope="local")
