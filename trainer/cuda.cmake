# The CUDA backend of gp_train (included when GP_HAVE_CUDA): host code in C against the CUDA
# runtime, cuBLAS/cuBLASLt and cuDNN; our kernels in a few small .cu files (one layer each).
enable_language(CUDA)
set(gp_train_cuda_kernels src/cuda/k_elementwise.cu src/cuda/k_pool.cu src/cuda/k_loss.cu
    src/cuda/k_optim.cu)
target_sources(gp_train PRIVATE src/cuda/backend_cuda.c src/cuda/cuda_layers.c
               src/cuda/cuda_gemm.c src/cuda/cuda_lt.c src/cuda/cuda_conv.c
               ${gp_train_cuda_kernels})
target_include_directories(gp_train PRIVATE src/cuda)
target_compile_definitions(gp_train PUBLIC GP_HAVE_CUDA)
target_link_libraries(gp_train PRIVATE CUDA::cudart CUDA::cublas CUDA::cublasLt)
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
  target_compile_definitions(gp_train PRIVATE GP_HAVE_CUDNN)
  target_link_libraries(gp_train PRIVATE gp::cudnn)
endif()
