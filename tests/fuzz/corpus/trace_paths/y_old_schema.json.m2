[
{"ph": "X", "cat": "Operator", "name": "ProfilerStep#3", "pid": 55, "tid": 55, "ts": 1623143089861000, "dur": 200, "args": {}},
{"ph": "X", "cat": "Operator", "name": "aten::mm", "pid": 55, "tid": 55, "ts": 1623143089861010, "dur": 50, "args": {"external id": 7, "Input dims": [[2, 2], [2, 2]]}},
{"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 55, "tid": 55, "ts": 1623143089861020, "dur": 10, "args": {"correlation": 9, "external id": 7}},
{"ph": "X", "cat": "Kernel", "name": "volta_sgemm_32x32", "pid": 0, "tid": "stream 7", "ts": 1623143089861040, "dur": 30.5, "args": {"correlation": 9, "external id": 7, "device": 0, "blocks per SM": "inf"}},
{"ph": "X", "cat": "Memset", "name": "Memset (Device)", "pid": 0, "tid": "stream 7", "ts": 1623143089861080, "dur": 2, "args": {"device": 0}},
{"ph": "B", "cat": "Operator", "name": "aten::zero_", "pid": 55, "tid": 55, "ts": 1623143089861100},
{"ph": "E", "pid": 55, "tid": 55, "ts": 1623143089861104}
]
