# Tests of the rules engine and `gprof-train diagnose` (issue 7) beyond the unit test
# tests/unit/test_analyze_rules.c and the golden cases in tests/golden/diagnose/:
# - the committed fixtures in tests/data/rules/ match what tests/rules/gen_rule_traces.py writes;
# - the JSON output conforms to the documented schema on every fixture (and ../shared/traces);
# - the trainer on the CPU with --workers 0 on a PNG image folder is diagnosed as starved, and
#   with enough workers it is not (tests/rules/trainer_starved.sh; needs `prepare` and `run`).
find_package(Python3 COMPONENTS Interpreter QUIET)
set(gp_rules_dir ${CMAKE_CURRENT_SOURCE_DIR}/rules)

if(Python3_FOUND)
  add_test(NAME rules_fixtures_fresh
           COMMAND ${Python3_EXECUTABLE} ${gp_rules_dir}/gen_rule_traces.py --check)
  set_tests_properties(rules_fixtures_fresh PROPERTIES LABELS unit TIMEOUT 120)

  set(gp_rules_json_inputs ${GP_TEST_DATA_DIR}/rules ${GP_TEST_DATA_DIR}/rules/contention
      ${CMAKE_CURRENT_SOURCE_DIR}/golden/diagnose/ledger_loss/input.json.gz) # a capture ledger
  if(EXISTS ${GP_SHARED_TRACES_DIR})
    list(APPEND gp_rules_json_inputs ${GP_SHARED_TRACES_DIR})
  endif()
  add_test(NAME rules_json_schema
           COMMAND ${Python3_EXECUTABLE} ${gp_rules_dir}/check_json.py $<TARGET_FILE:gprof-train>
                   ${gp_rules_json_inputs})
  set_tests_properties(rules_json_schema PROPERTIES LABELS cli TIMEOUT 300)

  # GT19 and GT01 under load on traces of the trainer beside busy loops (issue 24 §2)
  add_test(NAME rules_contention
           COMMAND ${Python3_EXECUTABLE} ${gp_rules_dir}/check_contention.py
                   $<TARGET_FILE:gprof-train> ${GP_TEST_DATA_DIR}/rules/contention)
  set_tests_properties(rules_contention PROPERTIES LABELS cli TIMEOUT 120)

  # GT04, GT01 and GT14 against gains measured on a real GPU (tests/data/h200/README.md)
  add_test(NAME rules_h200
           COMMAND ${Python3_EXECUTABLE} ${gp_rules_dir}/check_h200.py $<TARGET_FILE:gprof-train>
                   ${GP_TEST_DATA_DIR}/h200)
  set_tests_properties(rules_h200 PROPERTIES LABELS cli TIMEOUT 120)
  # GT04 and GT06 against their fixes timed on an H100 (tests/data/h100/README.md)
  add_test(NAME rules_h100
           COMMAND ${Python3_EXECUTABLE} ${gp_rules_dir}/check_h100.py $<TARGET_FILE:gprof-train>
                   ${GP_TEST_DATA_DIR}/h100)
  set_tests_properties(rules_h100 PROPERTIES LABELS cli TIMEOUT 120)
  # GT00's start-up and the steps the optimizer marks, on an H200 (tests/data/h200_startup/)
  add_test(NAME rules_h200_startup
           COMMAND ${Python3_EXECUTABLE} ${gp_rules_dir}/check_h200_startup.py
                   $<TARGET_FILE:gprof-train> ${GP_TEST_DATA_DIR}/h200_startup)
  set_tests_properties(rules_h200_startup PROPERTIES LABELS cli TIMEOUT 120)
  # GT14: first-time work (torch.compile recompiling for new batch sizes; the trainer's partial
  # batch on an H100) against a periodic stall (tests/data/torch/first_calls/, tests/data/h100/)
  add_test(NAME rules_first_calls
           COMMAND ${Python3_EXECUTABLE} ${gp_rules_dir}/check_first_calls.py
                   $<TARGET_FILE:gprof-train> ${GP_TEST_DATA_DIR}/torch/first_calls
                   ${GP_TEST_DATA_DIR}/h100/mlp_partial_batch.json.gz)
  set_tests_properties(rules_first_calls PROPERTIES LABELS cli TIMEOUT 120)
  # report's key averages against torch's own on the same real-GPU runs
  add_test(NAME report_h200_key_averages
           COMMAND ${Python3_EXECUTABLE} ${gp_rules_dir}/check_h200_keyavg.py
                   $<TARGET_FILE:gprof-train> ${GP_TEST_DATA_DIR}/h200)
  set_tests_properties(report_h200_key_averages PROPERTIES LABELS cli TIMEOUT 120)
  # the same on an H100's fp32 MLP runs, where CUPTI reported Command Buffer Full 54-75 times
  foreach(run run1 run2)
    add_test(NAME report_h100_key_averages_${run}
             COMMAND ${Python3_EXECUTABLE} ${gp_rules_dir}/check_h200_keyavg.py
                     $<TARGET_FILE:gprof-train> ${GP_TEST_DATA_DIR}/h100/${run})
    set_tests_properties(report_h100_key_averages_${run} PROPERTIES LABELS cli TIMEOUT 120)
  endforeach()
endif()

# GT14 and GT19 on the steps' own waits for a core (libprof's step args), a libprof program
# sharing one core with a busy loop (tests/rules/check_step_waits.py)
if(Python3_FOUND AND TARGET gp_prof)
  add_executable(waits_app ${gp_rules_dir}/waits_app.c)
  target_link_libraries(waits_app PRIVATE gp_prof)
  # GT14 on a new batch size's first-time work against a periodic stall (the trainer's
  # batch_size counter; tests/rules/check_shapes_app.py)
  add_executable(shapes_app ${gp_rules_dir}/shapes_app.c)
  target_link_libraries(shapes_app PRIVATE gp_prof)
  add_test(NAME rules_first_calls_batch
           COMMAND ${Python3_EXECUTABLE} ${gp_rules_dir}/check_shapes_app.py
                   $<TARGET_FILE:shapes_app> $<TARGET_FILE:gprof-train>)
  set_tests_properties(rules_first_calls_batch PROPERTIES LABELS cli SKIP_RETURN_CODE 77
                       TIMEOUT 300)
  foreach(case contended bursty paused)
    add_test(NAME rules_step_waits_${case}
             COMMAND ${Python3_EXECUTABLE} ${gp_rules_dir}/check_step_waits.py
                     $<TARGET_FILE:waits_app> $<TARGET_FILE:gprof-train> ${case})
    # RUN_SERIAL: the case's premise is one core shared with its own busy loop and nothing
    # else; beside ctest -j2's other tests (ASan's above all) a step also slowed by what no
    # scheduler figure of this thread shows (bursty: 8 of 199 steps, 6.5% of step time beyond
    # their waits, in a clean clone's ASan stage once; passes alone 20 of 20).
    set_tests_properties(rules_step_waits_${case} PROPERTIES LABELS cli SKIP_RETURN_CODE 77
                         TIMEOUT 300 RUN_SERIAL TRUE)
  endforeach()
endif()

add_test(NAME rules_trainer_starved
         COMMAND sh ${gp_rules_dir}/trainer_starved.sh $<TARGET_FILE:gprof-train>
                 ${CMAKE_CURRENT_BINARY_DIR}/rules-trainer)
# Run alone, as sweep_cli: GT01's verdict on a trainer run defers to GT19 when the cores are busy.
set_tests_properties(rules_trainer_starved PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 900
                     RUN_SERIAL TRUE)
# The accuracy suite's verdict on a predicted gain against a measured interval (bench/gain_stats.py)
add_test(NAME bench_gain_stats
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tests/unit/test_gain_stats.py
                 ${CMAKE_SOURCE_DIR}/bench)
set_tests_properties(bench_gain_stats PROPERTIES LABELS unit)
# GT01's gain where a batch's load takes about as long as training it: no jump where one crosses
# the other (tests/rules/check_gt01_keepup.py)
add_test(NAME rules_gt01_keepup
         COMMAND ${Python3_EXECUTABLE} ${gp_rules_dir}/check_gt01_keepup.py
                 $<TARGET_FILE:gprof-train>)
set_tests_properties(rules_gt01_keepup PROPERTIES LABELS cli)
