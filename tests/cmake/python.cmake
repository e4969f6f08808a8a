# The Python package (pyproject.toml, python/gprof_train): `pip install .` into a fresh venv and
# `make wheel` (tests/python/pip_install.sh: skipped only when pip cannot reach its index for the
# build backend), and the module's API against the binary of this build (tests/python/test_api.py:
# the JSON calls with this machine's python3, profile() and on_trace_ready with the real PyTorch
# from scripts/torch_venv.sh's venv). The package is built with its own options (Release, no
# sanitizer), so it is tested from the plain build only.
if(TARGET gprof-train)
  find_package(Python3 COMPONENTS Interpreter QUIET)
  if(NOT GP_SANITIZE)
    add_test(NAME python_pip_install
             COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/python/pip_install.sh ${CMAKE_SOURCE_DIR}
                     ${CMAKE_BINARY_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/data/torch/mlp_step.json.gz)
    set_tests_properties(python_pip_install PROPERTIES LABELS python TIMEOUT 1800
                         SKIP_RETURN_CODE 77)
  endif()
  if(Python3_Interpreter_FOUND)
    add_test(NAME python_api_cli
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/python/test_api.py cli
                     $<TARGET_FILE:gprof-train>)
    set_tests_properties(python_api_cli PROPERTIES LABELS python TIMEOUT 300)
  endif()
  add_test(NAME python_api_torch
           COMMAND sh ${CMAKE_SOURCE_DIR}/scripts/torch_venv.sh python3
                   ${CMAKE_CURRENT_SOURCE_DIR}/python/test_api.py torch $<TARGET_FILE:gprof-train>)
  set_tests_properties(python_api_torch PROPERTIES LABELS python TIMEOUT 3600
                       SKIP_RETURN_CODE 77 RESOURCE_LOCK torch_venv)
endif()
