# expect: 2:5: error: unknown schedule method 'frobnicate'
sch.frobnicate(block=b0)
