# export (issue 27 item 1): the Perfetto exporters side by side, used by bench_export.sh.
if(TARGET gp_export)
  add_executable(bench_export ${CMAKE_CURRENT_SOURCE_DIR}/export/bench_export.c)
  target_link_libraries(bench_export PRIVATE gp_export)
endif()
