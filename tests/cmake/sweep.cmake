# Tests of `gprof-train sweep` (issue 14 item 2) beyond the golden cases in tests/golden/sweep/:
# tests/sweep/test_sweep.py runs a tiny trainer grid, -- CMD templates, bad --vary specs, a
# failing run, and the PNG-decoding loader whose GT01 prediction is set beside the measured gain;
# tests/sweep/test_sweep_signal.py stops sweeps with SIGINT, SIGTERM and SIGHUP (issue 26): the
# running command is stopped too, the finished settings get their table and sweep.json.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_FOUND)
  foreach(t cli:300 signal:120)
    string(REPLACE ":" ";" t ${t})
    list(GET t 0 name)
    list(GET t 1 timeout)
    set(script test_sweep.py)
    if(NOT name STREQUAL "cli")
      set(script test_sweep_${name}.py)
    endif()
    add_test(NAME sweep_${name}
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/sweep/${script}
                     $<TARGET_FILE:gprof-train> ${CMAKE_BINARY_DIR}/tests/sweep_${name})
    set_tests_properties(sweep_${name} PROPERTIES LABELS cli TIMEOUT ${timeout})
  endforeach()
  # sweep_cli times the trainer and checks GT01's verdict on its loader waits: with another test
  # on the other core, GT19 rightly finds the training thread waiting for a core and GT01 defers
  # to it (free the cores first). Nothing runs beside it.
  set_tests_properties(sweep_cli PROPERTIES RUN_SERIAL TRUE)
endif()
