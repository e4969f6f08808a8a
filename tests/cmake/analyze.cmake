# analyze (issue 6): the independent Python check of per-kernel totals on ../shared/traces
# (exit 77 when absent) and the trace-reader fuzz target, whose corpus replays under ctest.
if(TARGET gp_analyze)
  find_package(Python3 COMPONENTS Interpreter)
  if(Python3_FOUND)
    add_test(NAME analyze_kernel_totals
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/analyze/kernel_totals.py
                     $<TARGET_FILE:gprof-train> ${GP_SHARED_TRACES_DIR})
    set_tests_properties(analyze_kernel_totals PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 300)
    # issue 17: the table equals PyTorch's key_averages() on real torch.profiler traces
    add_test(NAME analyze_torch_key_averages
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/analyze/torch_key_averages.py
                     $<TARGET_FILE:gprof-train> ${GP_TEST_DATA_DIR}/torch)
    set_tests_properties(analyze_torch_key_averages PROPERTIES LABELS cli TIMEOUT 120)
    add_test(NAME analyze_gt00_advice
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/analyze/gt00_advice.py
                     $<TARGET_FILE:gprof-train> ${GP_TEST_DATA_DIR}/torch)
    set_tests_properties(analyze_gt00_advice PROPERTIES LABELS cli TIMEOUT 120)
    # issue 24 §2: GT17's and GT18's verdicts and the profiler's cost against measured runs
    add_test(NAME analyze_torch_verdicts
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/analyze/torch_verdicts.py
                     $<TARGET_FILE:gprof-train> ${GP_TEST_DATA_DIR}/torch/verdicts)
    set_tests_properties(analyze_torch_verdicts PROPERTIES LABELS cli TIMEOUT 120)
    # issue 24: GT18's gain against its fix (one nn.LSTM for an LSTMCell loop), timed
    add_test(NAME analyze_torch_gains
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/analyze/torch_gains.py
                     $<TARGET_FILE:gprof-train> ${GP_TEST_DATA_DIR}/torch/gains)
    set_tests_properties(analyze_torch_gains PROPERTIES LABELS cli TIMEOUT 120)
  endif()
  if(GP_BUILD_BENCH AND TARGET gprof-train) # gen_kineto_trace is defined in bench/, later
    add_test(NAME analyze_split_same
             COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/analyze/split_same.sh $<TARGET_FILE:gprof-train>
                     $<TARGET_FILE:gen_kineto_trace> ${GP_TEST_DATA_DIR}/traces/y_nested.json
                     ${GP_TEST_DATA_DIR}/traces/y_old_schema.json
                     ${GP_TEST_DATA_DIR}/traces/y_truncated.json
                     ${CMAKE_CURRENT_SOURCE_DIR}/analyze/split_tricky.json)
    set_tests_properties(analyze_split_same PROPERTIES LABELS cli TIMEOUT 300)
  endif()
  # seeds: its own corpus and the reader's test traces (tests/data/traces, not copied)
  gp_add_fuzz(fuzz_trace_read ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_trace_read.c
              "${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/trace_read;${GP_TEST_DATA_DIR}/traces"
              gp_analyze)
  # every reader path (mapped, streamed, gzip, in memory; agreeing), the rules and the exporters
  gp_add_fuzz(fuzz_trace_paths ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_trace_paths.c
              ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/trace_paths gp_export gp_analyze ZLIB::ZLIB)
endif()
