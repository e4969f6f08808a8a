# Tests of `gprof-train job` (issue 15) beyond tests/unit/test_analyze_job.c and the golden cases
# in tests/golden/job/: the committed fixtures in tests/data/job/ match bench/gen_job.py, and
# tests/job/test_job.py runs generated jobs with known stragglers, NCCL name variants, clock
# skews and NDJSON output; tests/job/test_job_match.py checks that a collective is matched only
# with itself (issue 24: other orders on other streams, a lost kernel, skew, a real straggler),
# and bench/accuracy_job.py --fast gives GT16's verdicts on its accuracy cases (job_accuracy_cost:
# its cost on three of them). Issue 29: tests/job/test_job_summary.py (summaries and traces give
# `job` the same result), and in the job venv (tests/export/run_py.sh --job: dask[distributed],
# duckdb from PyPI) test_job_dask.py (scripts/job_dask.py on a LocalCluster) and test_job_sql.py
# (the README's DuckDB queries over the NDJSON tables).
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_FOUND)
  add_test(NAME job_fixtures_fresh
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/job/make_fixtures.py --check)
  set_tests_properties(job_fixtures_fresh PROPERTIES LABELS unit TIMEOUT 120)
  add_test(NAME job_cli
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/job/test_job.py
                   $<TARGET_FILE:gprof-train>)
  set_tests_properties(job_cli PROPERTIES LABELS cli TIMEOUT 300)
  add_test(NAME job_match
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/job/test_job_match.py
                   $<TARGET_FILE:gprof-train>)
  set_tests_properties(job_match PROPERTIES LABELS cli TIMEOUT 300)
  add_test(NAME job_accuracy_verdicts
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/bench/accuracy_job.py
                   $<TARGET_FILE:gprof-train> --fast)
  set_tests_properties(job_accuracy_verdicts PROPERTIES LABELS cli TIMEOUT 300)
  # GT16's cost is the exposed wait, once: within 25% of the injected delay where the waits
  # overlap the others' compute (gradient buckets beside the backward kernels)
  add_test(NAME job_accuracy_cost
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/bench/accuracy_job.py
                   $<TARGET_FILE:gprof-train> --case straggler_overlapped_buckets
                   --case straggler_just_over --case straggler_loader)
  set_tests_properties(job_accuracy_cost PROPERTIES LABELS cli TIMEOUT 120)
  # issue 27 §2: the job on one Perfetto timeline, decoded with perfetto_trace_pb2 (export venv)
  add_test(NAME job_perfetto
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/export/run_py.sh ${CMAKE_BINARY_DIR}
                   ${CMAKE_CURRENT_SOURCE_DIR}/job/test_job_perfetto.py $<TARGET_FILE:gprof-train>
                   ${CMAKE_CURRENT_BINARY_DIR}/job-perfetto
                   ${CMAKE_CURRENT_SOURCE_DIR}/export/data/starved_worker.1700000000000.pt.trace.json)
  set_tests_properties(job_perfetto PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 600)
  # issue 27 §3: job --html, the Distributed view, against job --format json
  add_test(NAME job_html
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/job/test_job_html.py
                   $<TARGET_FILE:gprof-train> ${CMAKE_CURRENT_BINARY_DIR}/job-html)
  set_tests_properties(job_html PROPERTIES LABELS cli TIMEOUT 300)
  add_test(NAME job_summary
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/job/test_job_summary.py
                   $<TARGET_FILE:gprof-train>)
  set_tests_properties(job_summary PROPERTIES LABELS cli TIMEOUT 300)
endif()
foreach(t dask sql)
  add_test(NAME job_${t}
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/export/run_py.sh --job ${CMAKE_BINARY_DIR}
                   ${CMAKE_CURRENT_SOURCE_DIR}/job/test_job_${t}.py $<TARGET_FILE:gprof-train>)
  set_tests_properties(job_${t} PROPERTIES LABELS cli TIMEOUT 600 SKIP_RETURN_CODE 77)
endforeach()
