{"traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": 1, "ts": 1, "dur": 2},
  {"ph": "X", "cat": "cpu_op", "name": "bad" "pid": 1}
]}
