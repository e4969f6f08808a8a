# Tests of the viewer export (viewer-export/, gp_export) and of the trainer's TensorBoard
# scalars writer (trainer/src/tfevents.c): C unit tests (tests/unit/test_export_*.c,
# test_train_tfevents.c), Python tests that load our output with TensorBoard's and
# torch-tb-profiler's own readers (a venv under the build dir; skip 77 only when pip cannot reach
# its index), a Perfetto-importer rules check, and headless-Chromium checks of the HTML report.

set(gp_tfevents_src ${CMAKE_SOURCE_DIR}/trainer/src/tfevents.c)
set(gp_export_tests ${CMAKE_CURRENT_SOURCE_DIR}/export)
set(gp_export_sample ${gp_export_tests}/data/starved_worker.1700000000000.pt.trace.json)
set(gp_export_work ${CMAKE_CURRENT_BINARY_DIR}/export-work)

# test_train_tfevents: the unit glob builds it against gp_train, which compiles tfevents.c when
# present; without the trainer, compile the writer into the test.
if(NOT TARGET test_train_tfevents)
  gp_add_test_exe(test_train_tfevents ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_train_tfevents.c unit)
endif()
if(TARGET gp_train)
  get_target_property(gp_train_srcs gp_train SOURCES)
  list(FILTER gp_train_srcs INCLUDE REGEX "tfevents\\.c$")
endif()
if(NOT gp_train_srcs)
  target_sources(test_train_tfevents PRIVATE ${gp_tfevents_src})
endif()
target_include_directories(test_train_tfevents PRIVATE ${CMAKE_SOURCE_DIR}/trainer/src)

add_executable(tfevents_write ${gp_export_tests}/tfevents_write.c ${gp_tfevents_src})
target_include_directories(tfevents_write PRIVATE ${CMAKE_SOURCE_DIR}/trainer/src)
target_link_libraries(tfevents_write PRIVATE gp_common)

foreach(t test_export_html test_export_perfetto test_export_tensorboard)
  if(TARGET ${t})
    target_include_directories(${t} PRIVATE ${gp_export_tests})
    target_link_libraries(${t} PRIVATE ZLIB::ZLIB)
  endif()
endforeach()
if(TARGET test_export_html) # html_short_kernel_name, internal to the page writer
  target_include_directories(test_export_html PRIVATE ${CMAKE_SOURCE_DIR}/viewer-export/src)
endif()

# gp_export_py_test(NAME SCRIPT ARGS...): a Python test run in the export venv (run_py.sh).
function(gp_export_py_test name script)
  add_test(NAME ${name} COMMAND sh ${gp_export_tests}/run_py.sh ${CMAKE_BINARY_DIR}
                                ${gp_export_tests}/${script} ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 900)
endfunction()

gp_export_py_test(export_tfevents_tensorboard test_tfevents_read.py $<TARGET_FILE:tfevents_write>
                  ${gp_export_work}/tfevents)
if(TARGET gp_export)
  gp_export_py_test(export_tb_plugin test_tb_plugin.py $<TARGET_FILE:gprof-train>
                    ${gp_export_sample} ${gp_export_work}/tb_plugin)
  gp_export_py_test(export_tb_module_view test_tb_module_view.py $<TARGET_FILE:gprof-train>
                    ${GP_TEST_DATA_DIR}/torch/with_stack.json.gz ${gp_export_work}/tb_module_view)
  # issue 27 §4: tb's operators by input shape on our export equal tb's on the original, and
  # no op leaves its thread for an overflow one
  gp_export_py_test(export_tb_parity test_tb_parity.py $<TARGET_FILE:gprof-train>
                    ${gp_export_work}/tb_parity ${GP_TEST_DATA_DIR}/torch/record_shapes.json.gz
                    ${GP_TEST_DATA_DIR}/torch/flops_shapes.json.gz
                    ${GP_TEST_DATA_DIR}/torch/with_stack.json.gz
                    ${GP_TEST_DATA_DIR}/torch/with_stack_steps.json.gz)
  # the native Perfetto protobuf export decoded with Perfetto's own schema (perfetto_trace_pb2)
  # and compared with the JSON export: the sample, our real PyTorch traces (memory, shapes,
  # stacks), then the shared real traces where present
  gp_export_py_test(export_perfetto_proto test_perfetto_proto.py $<TARGET_FILE:gprof-train>
                    ${gp_export_sample} ${gp_export_work}/proto 1)
  # libprof's own trace: counters (gp_prof_counter), marks, two threads
  if(TARGET gp_prof_static)
    add_executable(prof_counters_write ${gp_export_tests}/prof_counters_write.c)
    target_link_libraries(prof_counters_write PRIVATE gp_prof_static m)
    gp_export_py_test(export_perfetto_proto_libprof test_perfetto_proto.py
                      $<TARGET_FILE:gprof-train> prof:$<TARGET_FILE:prof_counters_write>
                      ${gp_export_work}/proto_libprof)
  endif()
  gp_export_py_test(export_perfetto_proto_torch test_perfetto_proto.py
                    $<TARGET_FILE:gprof-train> ${GP_TEST_DATA_DIR}/torch/
                    ${gp_export_work}/proto_torch)
  gp_export_py_test(export_perfetto_proto_real test_perfetto_proto.py $<TARGET_FILE:gprof-train>
                    ${GP_SHARED_TRACES_DIR}/ ${gp_export_work}/proto_real)
  # Perfetto's own importer: only where a trace_processor binary is given at configure time
  # (-DGP_TRACE_PROCESSOR=/path; PyPI's perfetto package downloads it from outside PyPI).
  if(GP_TRACE_PROCESSOR)
    gp_export_py_test(export_perfetto_trace_processor test_perfetto_tp.py
                      $<TARGET_FILE:gprof-train> ${gp_export_sample} ${gp_export_work}/tp)
    set_property(TEST export_perfetto_trace_processor APPEND PROPERTY ENVIRONMENT
                 GP_TRACE_PROCESSOR=${GP_TRACE_PROCESSOR})
  endif()
  add_test(NAME export_perfetto_importer_rules
           COMMAND python3 ${gp_export_tests}/check_perfetto.py $<TARGET_FILE:gprof-train>
                   ${gp_export_sample} ${gp_export_work}/perfetto)
  # issue 27 §3: the HTML's operator tables, FLOPs, busy cards, memory peaks and findings'
  # pointers into the Perfetto file are report --format json's and export --perfetto's
  add_test(NAME export_html_numbers
           COMMAND ${Python3_EXECUTABLE} ${gp_export_tests}/test_html_numbers.py
                   $<TARGET_FILE:gprof-train> ${GP_TEST_DATA_DIR}/torch/flops_shapes.json.gz
                   ${gp_export_sample} ${GP_TEST_DATA_DIR}/rules/healthy.json.gz
                   ${GP_TEST_DATA_DIR}/torch/profile_memory.json.gz)
  set_tests_properties(export_html_numbers PROPERTIES LABELS cli TIMEOUT 120)
  add_test(NAME export_html_chromium
           COMMAND sh ${gp_export_tests}/test_html_chromium.sh $<TARGET_FILE:gprof-train>
                   ${gp_export_sample} ${gp_export_work}/html)
  # compare's before/after page, the same checks (issue 14 item 1)
  add_test(NAME export_compare_html_chromium
           COMMAND sh ${gp_export_tests}/test_html_chromium.sh $<TARGET_FILE:gprof-train>
                   ${GP_TEST_DATA_DIR}/rules/healthy.json.gz ${gp_export_work}/compare_html
                   ${GP_TEST_DATA_DIR}/rules/starved_trainer.json.gz)
  # a job's Distributed view (job --html), the same checks (issue 27 §3)
  add_test(NAME export_job_html_chromium
           COMMAND sh ${gp_export_tests}/test_html_chromium.sh $<TARGET_FILE:gprof-train>
                   ${GP_TEST_DATA_DIR}/job/straggler ${gp_export_work}/job_html)
  set_tests_properties(export_perfetto_importer_rules export_html_chromium
                       export_compare_html_chromium export_job_html_chromium PROPERTIES
                       LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 300)
endif()

# export never leaves OUT.tmp.PID behind when it is stopped by a signal mid-write.
if(TARGET gp_export)
  find_package(Python3 COMPONENTS Interpreter)
  if(Python3_FOUND)
    add_test(NAME export_signal_cleanup
             COMMAND ${Python3_EXECUTABLE} ${gp_export_tests}/test_export_signal.py
                     $<TARGET_FILE:gprof-train> ${gp_export_work}/signal)
    set_tests_properties(export_signal_cleanup PROPERTIES LABELS cli SKIP_RETURN_CODE 77
                         TIMEOUT 300)
  endif()
endif()
