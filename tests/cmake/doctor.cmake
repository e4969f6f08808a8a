# `gprof-train doctor` on whatever machine runs the tests (verdict lines and exit codes).
add_test(NAME cli_doctor COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/doctor.sh $<TARGET_FILE:gprof-train>)
set_tests_properties(cli_doctor PROPERTIES LABELS cli TIMEOUT 60)

# doctor against a fake driver (issue 26): a cuInit that crashes is reported, the lines before it
# kept; a GPU name that fills the buffer without a NUL is not read past.
if(GP_HAVE_CUPTI)
  add_library(gp_fake_cuda SHARED ${CMAKE_CURRENT_SOURCE_DIR}/cli/fake_libcuda.c)
  set_target_properties(gp_fake_cuda PROPERTIES OUTPUT_NAME cuda SOVERSION 1
                        LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/fake_cuda)
  add_test(NAME cli_doctor_fake_driver
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/doctor.sh $<TARGET_FILE:gprof-train>
                   ${CMAKE_BINARY_DIR}/tests/fake_cuda)
  set_tests_properties(cli_doctor_fake_driver PROPERTIES LABELS cli TIMEOUT 60 SKIP_RETURN_CODE 77)
endif()
