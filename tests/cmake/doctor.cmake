# `gprof-train doctor` on whatever machine runs the tests (verdict lines and exit codes).
add_test(NAME cli_doctor COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/doctor.sh $<TARGET_FILE:gprof-train>)
set_tests_properties(cli_doctor PROPERTIES LABELS cli TIMEOUT 60)
