# Hostile and careless inputs (issue 26): tests/cli/test_hardening.py, one ctest a case.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_FOUND)
  foreach(case empty_folder export_overwrite max_memory_names gzip_bomb real_traces_fit
               compare_not_evaluated runs_folder sweep_cmd_errors negative_dur pipe_and_encoding
               unknown_command_hint sweep_out rank_parsing stream_columns shrink_while_read
               make_run_quiet run_quiet_rules)
    add_test(NAME harden_${case}
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/cli/test_hardening.py
                     $<TARGET_FILE:gprof-train> ${CMAKE_BINARY_DIR}/tests/harden ${case})
    set_tests_properties(harden_${case} PROPERTIES LABELS cli TIMEOUT 120 SKIP_RETURN_CODE 77
                          ENVIRONMENT GP_SHARED_TRACES=${GP_SHARED_TRACES_DIR})
  endforeach()
  # a gzip bomb is read up to the 256 MiB floor: 2.5 min under ASan on a loaded 2-core machine
  set_tests_properties(harden_gzip_bomb PROPERTIES TIMEOUT 600)
endif()
