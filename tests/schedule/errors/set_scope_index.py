# expect: 3:.*set_scope: block 'matmul' writes 1 buffer, so buffer_index must be in \[0, 1\), not 1
b0 = sch.get_block(name="matmul")
sch.set_scope(block=b0, buffer_index=1, storage_scope="shared")
