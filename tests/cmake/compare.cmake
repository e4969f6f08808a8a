# Tests of `gprof-train compare` with runs as the unit (issue 24 §3) beyond the golden cases in
# tests/golden/compare/ and tests/unit/test_analyze_compare.c: tests/compare/test_compare_runs.py
# generates run sets with known step times and run-level offsets (no timing) and checks the
# verdicts, the one-run warning, --vs, and folders of run folders.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_FOUND)
  add_test(NAME compare_runs
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/compare/test_compare_runs.py
                   $<TARGET_FILE:gprof-train> ${CMAKE_BINARY_DIR}/tests/compare_runs)
  set_tests_properties(compare_runs PROPERTIES LABELS cli TIMEOUT 120)
  # compare of two folders of many small traces holds a batch of summaries, not all (issue 26)
  add_test(NAME compare_many
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/compare/test_compare_many.py
                   $<TARGET_FILE:gprof-train> ${CMAKE_BINARY_DIR}/tests/compare_many
                   ${CMAKE_SOURCE_DIR}/tests/data/rules/starved_pytorch_cpu.json.gz)
  set_tests_properties(compare_many PROPERTIES LABELS cli TIMEOUT 600)
endif()
