# Trainer tests beyond the unit tests: CLI checks of `run`/`prepare` on the IDX fixture, and the
# CUDA kernels and layers against the CPU reference (label cuda; exit 77 without a GPU).
if(TARGET gp_train)
  add_test(NAME train_cli
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/train/cli_train.sh $<TARGET_FILE:gprof-train>
                   ${CMAKE_CURRENT_SOURCE_DIR}/data/idx)
  set_tests_properties(train_cli PROPERTIES LABELS cli TIMEOUT 300)
  find_package(Python3 COMPONENTS Interpreter QUIET)
  if(Python3_FOUND)
    # the CPU accounting GT19 and GT01 read from the trace (issue 24 §2)
    add_test(NAME train_cpu_accounting
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/train/cpu_accounting.py
                     $<TARGET_FILE:gprof-train> ${CMAKE_CURRENT_SOURCE_DIR}/data/idx)
    set_tests_properties(train_cpu_accounting PROPERTIES LABELS cli TIMEOUT 120
                         SKIP_RETURN_CODE 77)
  endif()
  if(GP_HAVE_CUDA)
    gp_add_test_exe(test_train_cuda_vs_cpu ${CMAKE_CURRENT_SOURCE_DIR}/cuda/test_train_cuda_vs_cpu.c
                    cuda gp_train gp_train_cuda)
    target_include_directories(test_train_cuda_vs_cpu PRIVATE ${CMAKE_SOURCE_DIR}/trainer/src
                               ${CMAKE_SOURCE_DIR}/trainer/src/cpu
                               ${CMAKE_SOURCE_DIR}/trainer/src/cuda)
    target_link_libraries(test_train_cuda_vs_cpu PRIVATE CUDA::cudart)
  endif()
endif()
