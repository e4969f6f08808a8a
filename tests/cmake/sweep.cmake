# Tests of `gprof-train sweep` (issue 14 item 2) beyond the golden cases in tests/golden/sweep/:
# tests/sweep/test_sweep.py runs a tiny trainer grid, -- CMD templates, bad --vary specs, a
# failing run, and the PNG-decoding loader whose GT01 prediction is set beside the measured gain.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_FOUND)
  add_test(NAME sweep_cli
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/sweep/test_sweep.py
                   $<TARGET_FILE:gprof-train> ${CMAKE_BINARY_DIR}/tests/sweep)
  set_tests_properties(sweep_cli PROPERTIES LABELS cli TIMEOUT 300)
endif()
