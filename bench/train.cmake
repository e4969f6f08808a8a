# Trainer benchmarks (bench/bench_train.sh): `cmake --build B --target bench-train` runs them
# against this build's gprof-train; `make bench` runs them through bench/run.sh.
add_custom_target(bench-train
                  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/bench_train.sh ${CMAKE_BINARY_DIR}
                  DEPENDS gprof-train USES_TERMINAL)
