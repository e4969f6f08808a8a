# The CUDA backend (included when GP_HAVE_CUDA): lib/libgp_train_cuda.so, host code in C against
# the CUDA runtime, cuBLAS/cuBLASLt and cuDNN, our kernels in a few small .cu files (one layer
# each). gp_train loads it on first use (src/cuda_module.c), so nothing else maps CUDA libraries.
enable_language(CUDA)
set(gp_train_cuda_kernels src/cuda/k_elementwise.cu src/cuda/k_pool.cu src/cuda/k_loss.cu
    src/cuda/k_optim.cu)
add_library(gp_train_cuda SHARED src/cuda/backend_cuda.c src/cuda/cuda_layers.c
            src/cuda/cuda_gemm.c src/cuda/cuda_lt.c src/cuda/cuda_conv.c src/cuda/cuda_graph.c
            src/model.c ${gp_train_cuda_kernels})
set_target_properties(gp_train_cuda PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib)
target_include_directories(gp_train_cuda PRIVATE include src src/cpu src/cuda)
target_compile_definitions(gp_train_cuda PRIVATE GP_HAVE_CUDA GP_CUDA_ARCHS="${GP_CUDA_ARCHS}")
target_link_libraries(gp_train_cuda PRIVATE gp_common gp_prof gp_schema CUDA::cudart CUDA::cublas
                      CUDA::cublasLt m)
target_sources(gp_train PRIVATE src/cuda_module.c)
target_compile_definitions(gp_train PUBLIC GP_HAVE_CUDA)
target_link_libraries(gp_train PRIVATE ${CMAKE_DL_LIBS})
add_dependencies(gp_train gp_train_cuda)
# Host-side warnings as for C; device-side ones (ptxas spills, local memory) are reported too.
# They stay warnings unless GP_WERROR (nvcc's --Werror all-warnings covers both).
set(gp_cuda_warn -Xcompiler=-Wall,-Wextra -Xptxas=-warn-spills,-warn-lmem-usage)
if(GP_WERROR)
  list(APPEND gp_cuda_warn --Werror=all-warnings)
endif()
set_source_files_properties(
  ${gp_train_cuda_kernels} PROPERTIES COMPILE_OPTIONS
  "$<$<COMPILE_LANGUAGE:CUDA>:${gp_cuda_warn};--expt-relaxed-constexpr>")
if(GP_HAVE_CUDNN)
  target_compile_definitions(gp_train_cuda PRIVATE GP_HAVE_CUDNN)
  target_link_libraries(gp_train_cuda PRIVATE gp::cudnn)
endif()
# The module finds libgp_prof.so beside it ($ORIGIN: lib/ wherever it is installed or copied),
# and the CUDA runtime, cuBLAS and cuDNN where this build found them (a runfile install or pip's
# nvidia-* wheels are not on the loader's default path); LD_LIBRARY_PATH still comes first.
# tests/cuda/check_module.py checks both.
set(gp_cuda_rpath "$ORIGIN" ${CUDAToolkit_LIBRARY_DIR})
if(GP_HAVE_CUDNN)
  get_target_property(gp_cudnn_lib gp::cudnn IMPORTED_LOCATION)
  if(gp_cudnn_lib)
    get_filename_component(gp_cudnn_dir ${gp_cudnn_lib} DIRECTORY)
    list(APPEND gp_cuda_rpath ${gp_cudnn_dir})
  endif()
endif()
set_property(TARGET gp_train_cuda APPEND PROPERTY BUILD_RPATH ${gp_cuda_rpath})
set_property(TARGET gp_train_cuda APPEND PROPERTY INSTALL_RPATH ${gp_cuda_rpath})
install(TARGETS gp_train_cuda LIBRARY DESTINATION lib)
