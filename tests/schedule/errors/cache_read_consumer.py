# expect: 4:.*cache_read: consumer 0 is not a block of the scope of block 'matmul'
b0 = sch.get_block(name="matmul")
b1 = sch.get_block(name="root")
b2 = sch.cache_read(block=b0, read_buffer_index=0, storage_scope="shared", consumer_blocks=[b1])
