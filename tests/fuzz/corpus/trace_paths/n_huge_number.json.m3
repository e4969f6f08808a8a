{"traceEvents": [
 {"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": 1, "ts": 1e400, "dur": 2}
]}
