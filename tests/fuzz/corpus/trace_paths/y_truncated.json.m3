{"schemaVersion": 1, "baseTimeNanoseconds": 1700000000000000000, "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 5.125, "dur": 2.5},
  {"ph": "X", "cat": "kernel", "name": "add_kernel", "pid": 0, "tid": 7, "ts": 9.0, "dur": 1.0, "args": {"stream": 7}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mu
