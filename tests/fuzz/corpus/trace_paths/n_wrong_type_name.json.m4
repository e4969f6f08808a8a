{"traceEvents": [
 {"ph": "X", "cat": "cpu_op", "name": 42, "pid": 1, "tid": 1, "ts": 1, "dur": 2}
]}
