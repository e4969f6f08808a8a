# analyze (issue 6): the Kineto-style trace generator used by bench_analyze.sh.
add_executable(gen_kineto_trace ${CMAKE_CURRENT_SOURCE_DIR}/analyze/gen_kineto_trace.c)
