# expect: 3:.*storage_align: buffer 'C' is not allocated by a block: it is a function parameter
b0 = sch.get_block(name="matmul")
sch.storage_align(block=b0, buffer_index=0, axis=0, factor=16, offset=1)
