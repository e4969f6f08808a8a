# Build facts of the trainer's CUDA module (tests/cuda/check_module.py, label build): the
# architectures in its fatbins (sm_75 machine code and compute_75 PTX among them) and its
# RUNPATH ($ORIGIN and the CUDA library folder), at build time and for install. No GPU needed.
if(TARGET gp_train_cuda)
  set(cb_default 0)
  if(GP_CUDA_ARCHS_DEFAULT)
    set(cb_default 1)
  endif()
  add_test(NAME build_cuda_module
           COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/cuda/check_module.py
                   $<TARGET_FILE:gp_train_cuda> ${CUDAToolkit_LIBRARY_DIR} ${cb_default}
                   "$<TARGET_PROPERTY:gp_train_cuda,INSTALL_RPATH>")
  set_tests_properties(build_cuda_module PROPERTIES LABELS build)
endif()
