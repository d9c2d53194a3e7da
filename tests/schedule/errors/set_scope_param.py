# expect: 3:.*set_scope: buffer 'C' is not allocated by a block: it is a function parameter or a match_buffer view
b0 = sch.get_block(name="matmul")
sch.set_scope(block=b0, buffer_index=0, storage_scope="shared")
