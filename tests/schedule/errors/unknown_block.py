# expect: 2:.*get_block: function 'main' has no block named 'nope'
b0 = sch.get_block(name="nope")
