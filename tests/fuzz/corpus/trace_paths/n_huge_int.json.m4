{"traceEvents": [
 {"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": 1, "ts": 99999999999999999999999, "dur": 2}
]}
