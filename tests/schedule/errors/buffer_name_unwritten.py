# expect: 3:19: error: block 'matmul' writes no buffer named 'A'
b0 = sch.get_block(name="matmul")
sch.set_scope(b0, "A", "local")
