# libprof tests beyond the unit tests: scenario programs whose traces test_prof_trace.py checks
# with Python's strict json module (nesting, names, signals, full disk, NVTX injection).
if(TARGET gp_prof)
  set(gp_prof_dir ${CMAKE_CURRENT_SOURCE_DIR}/prof)
  add_executable(prof_app ${gp_prof_dir}/prof_app.c)
  target_link_libraries(prof_app PRIVATE gp_prof Threads::Threads)
  set(gp_prof_cases threads atexit gzip sigint sigterm fsize unwritable schedule)
  if(GP_NVTX3_INCLUDE)
    # Only NVTX3's headers: no libprof API, no CUDA runtime.
    # NAME (NVTX3's headers only, for injection) and NAME_linked (libprof linked, LINKED_DEF set).
    function(gp_nvtx_programs name linked_def)
      add_executable(${name} ${gp_prof_dir}/${name}.c)
      target_include_directories(${name} PRIVATE ${GP_NVTX3_INCLUDE})
      target_link_libraries(${name} PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
      add_executable(${name}_linked ${gp_prof_dir}/${name}.c)
      target_compile_definitions(${name}_linked PRIVATE ${linked_def})
      target_include_directories(${name}_linked PRIVATE ${GP_NVTX3_INCLUDE})
      target_link_libraries(${name}_linked PRIVATE gp_prof Threads::Threads ${CMAKE_DL_LIBS})
    endfunction()
    gp_nvtx_programs(nvtx_app NVTX_APP_LINKED)
    list(APPEND gp_prof_cases nvtx nvtx_linked)
    # Threads whose first NVTX call races NVTX's initialisation (test_prof_race.py).
    gp_nvtx_programs(nvtx_race NVTX_RACE_LINKED)
    foreach(mode inject linked)
      add_test(NAME prof_nvtx_race_${mode}
               COMMAND python3 ${gp_prof_dir}/test_prof_race.py ${mode} $<TARGET_FILE_DIR:nvtx_race>
                       ${CMAKE_BINARY_DIR}/lib)
      set_tests_properties(prof_nvtx_race_${mode} PROPERTIES LABELS unit TIMEOUT 600)
    endforeach()
  endif()
  if(TARGET gprof-train AND GP_NVTX3_INCLUDE)
    add_test(NAME prof_run_exec
             COMMAND python3 ${gp_prof_dir}/test_prof_trace.py run_exec $<TARGET_FILE_DIR:prof_app>
                     ${CMAKE_BINARY_DIR}/lib $<TARGET_FILE:gprof-train>)
    set_tests_properties(prof_run_exec PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 300)
    # run SIGKILLed takes CMD with it; a program dead after its first NVTX push (issue 23).
    foreach(case run_orphan early_death)
      add_test(NAME prof_${case}
               COMMAND python3 ${gp_prof_dir}/test_prof_trace.py ${case}
                       $<TARGET_FILE_DIR:prof_app> ${CMAKE_BINARY_DIR}/lib $<TARGET_FILE:gprof-train>)
      set_tests_properties(prof_${case} PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 300)
    endforeach()
  endif()
  if(GP_HAVE_CUDA AND GP_NVTX3_INCLUDE)
    # Known GPU work; the test skips (77) without a GPU. [unverified here: no GPU]
    add_executable(cuda_app ${gp_prof_dir}/cuda_app.cu)
    target_include_directories(cuda_app PRIVATE ${GP_NVTX3_INCLUDE})
    target_link_libraries(cuda_app PRIVATE CUDA::cudart ${CMAKE_DL_LIBS})
    set_target_properties(cuda_app PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
    add_test(NAME prof_cuda_app
             COMMAND python3 ${gp_prof_dir}/test_prof_trace.py cuda $<TARGET_FILE_DIR:prof_app>
                     ${CMAKE_BINARY_DIR}/lib)
    set_tests_properties(prof_cuda_app PROPERTIES LABELS cuda SKIP_RETURN_CODE 77 TIMEOUT 300)
  endif()
  # Capture under stress with default options (test_prof_capture.py).
  add_executable(prof_stress ${gp_prof_dir}/prof_stress.c)
  target_link_libraries(prof_stress PRIVATE gp_prof Threads::Threads)
  foreach(case nest tight many seq die)
    add_test(NAME prof_capture_${case}
             COMMAND python3 ${gp_prof_dir}/test_prof_capture.py ${case} $<TARGET_FILE_DIR:prof_stress>)
    set_tests_properties(prof_capture_${case} PROPERTIES LABELS unit TIMEOUT 600
                         ENVIRONMENT "GP_SANITIZE=${GP_SANITIZE}")
  endforeach()
  if(GP_NVTX3_INCLUDE AND NOT GP_SANITIZE)
    # NVTX ranges from Python (NVIDIA's nvtx package, in the export tests' venv) by injection.
    # Not in sanitizer builds: python3 itself is not instrumented, so it cannot load them.
    add_test(NAME prof_capture_python_nvtx
             COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/export/run_py.sh ${CMAKE_BINARY_DIR}
                     ${gp_prof_dir}/py_nvtx_ranges.py ${CMAKE_BINARY_DIR}/lib)
    set_tests_properties(prof_capture_python_nvtx PROPERTIES LABELS unit SKIP_RETURN_CODE 77
                         TIMEOUT 900)
  endif()
  foreach(case ${gp_prof_cases})
    add_test(NAME prof_trace_${case}
             COMMAND python3 ${gp_prof_dir}/test_prof_trace.py ${case}
                     $<TARGET_FILE_DIR:prof_app> ${CMAKE_BINARY_DIR}/lib)
    set_tests_properties(prof_trace_${case} PROPERTIES LABELS unit SKIP_RETURN_CODE 77 TIMEOUT 300)
  endforeach()
endif()

# Unit tests call libprof's private functions: link the static copy instead of the shared
# library (hidden symbols), so the test and the code under test share one set of globals.
file(GLOB gp_prof_units CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_prof_*.c)
foreach(src ${gp_prof_units})
  get_filename_component(name ${src} NAME_WE)
  if(TARGET ${name})
    set_property(TARGET ${name} PROPERTY LINK_LIBRARIES gp_common m gp_prof_static Threads::Threads)
  endif()
endforeach()

# The CUPTI conversion test (synthetic CUDA 13 records, no GPU needed) includes cupti.h: it is
# built only where CUPTI is (not in the ASan build with GP_WITH_CUDA=OFF).
if(GP_HAVE_CUPTI AND TARGET gp_prof_static)
  gp_add_test_exe(test_prof_cupti ${CMAKE_CURRENT_SOURCE_DIR}/prof/test_prof_cupti.c unit
                  gp_prof_static Threads::Threads ZLIB::ZLIB)
  get_target_property(gp_cupti_inc gp::cupti INTERFACE_INCLUDE_DIRECTORIES)
  target_include_directories(test_prof_cupti PRIVATE ${CMAKE_SOURCE_DIR}/libprof/src ${gp_cupti_inc}
                             ${CUDAToolkit_INCLUDE_DIRS})
  target_compile_definitions(test_prof_cupti PRIVATE GP_HAVE_CUPTI)
endif()
