# The trainer's CUDA kernels on the CPU (tests/cudacpu, label gpu-sim): k_*.cu rewritten only in
# their launch syntax (host_cu.py) and compiled as host C++ against cuda_cpu_shim.h, one OS
# thread per CUDA thread, checked against the CPU backend. Needs CUDA's headers (fp16/bf16 host
# conversions), not nvcc: it runs in the sanitizer builds too.
find_path(GP_CUDA_HEADERS cuda_fp16.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
if(GP_CUDA_HEADERS AND TARGET gp_train)
  enable_language(CXX)
  set(kc_src ${CMAKE_CURRENT_SOURCE_DIR}/cudacpu)
  set(kc_gen ${CMAKE_CURRENT_BINARY_DIR}/cudacpu)
  set(kc_cc "")
  file(MAKE_DIRECTORY ${kc_gen})
  foreach(k k_elementwise k_loss k_optim k_pool)
    add_custom_command(OUTPUT ${kc_gen}/${k}.cc
                       COMMAND python3 ${kc_src}/host_cu.py ${CMAKE_SOURCE_DIR}/trainer/src/cuda/${k}.cu
                               ${kc_gen}/${k}.cc
                       DEPENDS ${CMAKE_SOURCE_DIR}/trainer/src/cuda/${k}.cu ${kc_src}/host_cu.py)
    list(APPEND kc_cc ${kc_gen}/${k}.cc)
  endforeach()
  set(cpu ${CMAKE_SOURCE_DIR}/trainer/src/cpu)
  add_executable(cudacpu_kernels ${kc_src}/test_cuda_kernels_cpu.cc ${kc_cc} ${cpu}/cpu_act.c
                 ${cpu}/cpu_loss.c ${cpu}/cpu_optim.c)
  set_source_files_properties(${kc_cc} PROPERTIES HEADER_FILE_ONLY ON)
  set_target_properties(cudacpu_kernels PROPERTIES CXX_STANDARD 17 CXX_EXTENSIONS OFF)
  target_include_directories(cudacpu_kernels PRIVATE ${kc_src} ${kc_gen} ${GP_CUDA_HEADERS}
                             ${CMAKE_SOURCE_DIR}/trainer/src/cuda ${cpu})
  target_compile_options(cudacpu_kernels PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-w>)
  target_link_libraries(cudacpu_kernels PRIVATE Threads::Threads m)
  if(GP_SANITIZE)
    # fatal as for C (CMakeLists.txt): a UBSan report (an out-of-bounds __shared__ index) fails
    # the test instead of scrolling past
    target_compile_options(cudacpu_kernels PRIVATE
                           $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=${GP_SANITIZE};-fno-omit-frame-pointer;-fno-sanitize-recover=all>)
  endif()
  add_test(NAME cudacpu_kernels COMMAND cudacpu_kernels)
  set_tests_properties(cudacpu_kernels PROPERTIES LABELS gpu-sim TIMEOUT 300)
endif()
