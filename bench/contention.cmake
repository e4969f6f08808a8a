# GT19 (CPU contention) and GT01 under load (bench/accuracy_contention.sh): `cmake --build B
# --target bench-contention` runs its cases against this build's gprof-train (about 2 minutes on
# 2 cores); `make bench` runs it through bench/run.sh.
add_custom_target(bench-contention
                  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/accuracy_contention.sh ${CMAKE_BINARY_DIR}
                  DEPENDS gprof-train USES_TERMINAL)
