# libprof benchmarks: hot-path cost of a range and writer throughput (bench/bench_prof.sh).
if(TARGET gp_prof)
  add_executable(bench_prof_range ${CMAKE_CURRENT_SOURCE_DIR}/prof/bench_prof_range.c)
  target_link_libraries(bench_prof_range PRIVATE gp_prof) # as programs use it: the shared library
  if(GP_NVTX3_INCLUDE)
    target_include_directories(bench_prof_range PRIVATE ${GP_NVTX3_INCLUDE})
    target_compile_definitions(bench_prof_range PRIVATE GP_BENCH_NVTX)
    target_link_libraries(bench_prof_range PRIVATE ${CMAKE_DL_LIBS})
  endif()
  # The writer bench reads the writer thread's CPU time, a private function: the static copy;
  # zlib for its floor (the same bytes deflated without formatting).
  add_executable(bench_prof_writer ${CMAKE_CURRENT_SOURCE_DIR}/prof/bench_prof_writer.c)
  target_link_libraries(bench_prof_writer PRIVATE gp_prof_static Threads::Threads ZLIB::ZLIB)
  target_include_directories(bench_prof_writer PRIVATE ${CMAKE_SOURCE_DIR}/libprof/src)
  # The step bench times libprof's scheduler read alone too, a private function: the static copy.
  add_executable(bench_prof_step ${CMAKE_CURRENT_SOURCE_DIR}/prof/bench_prof_step.c)
  target_link_libraries(bench_prof_step PRIVATE gp_prof_static Threads::Threads)
  target_include_directories(bench_prof_step PRIVATE ${CMAKE_SOURCE_DIR}/libprof/src)
  set_target_properties(bench_prof_range bench_prof_writer bench_prof_step PROPERTIES
                        RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
endif()
