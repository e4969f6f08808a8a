# The simulated device (tests/simdev, label gpu-sim): the trainer's CUDA backend (its host
# sources unchanged, against CUDA 13's headers) built as a module of its own,
# libgp_train_cuda_sim.so, linked to test doubles of the CUDA runtime, cuBLAS/cuBLASLt and cuDNN
# that compute on the host (the k_*.cu kernels through tests/cudacpu's shim), give device work
# modelled times and report it through the simulated CUPTI and driver of tests/gpusim.
# `gprof-train run --device cuda` trains on it with GP_TRAIN_CUDA_LIB pointing at the module.
if(TARGET fake_cupti AND TARGET fake_cuda AND TARGET cudacpu_kernels AND TARGET gprof-train
   AND GP_TRAIN_CUDA_MODULE)
  set(sd_src ${CMAKE_CURRENT_SOURCE_DIR}/simdev)
  set(sd_out ${CMAKE_CURRENT_BINARY_DIR}/simdev)
  set(tsrc ${CMAKE_SOURCE_DIR}/trainer/src)
  add_library(gp_train_cuda_sim SHARED
              ${tsrc}/cuda/backend_cuda.c ${tsrc}/cuda/cuda_layers.c ${tsrc}/cuda/cuda_gemm.c
              ${tsrc}/cuda/cuda_lt.c ${tsrc}/cuda/cuda_conv.c ${tsrc}/cuda/cuda_graph.c
              ${tsrc}/model.c
              ${sd_src}/sim_model.c ${sd_src}/sim_rt.c ${sd_src}/sim_copy.c ${sd_src}/sim_blas.c
              ${sd_src}/sim_graph.c ${sd_src}/sim_kernels.cc)
  set_source_files_properties(${sd_src}/sim_kernels.cc PROPERTIES OBJECT_DEPENDS "${kc_cc}")
  set_target_properties(gp_train_cuda_sim PROPERTIES CXX_STANDARD 17 CXX_EXTENSIONS OFF
                        LIBRARY_OUTPUT_DIRECTORY ${sd_out})
  target_include_directories(gp_train_cuda_sim PRIVATE ${CMAKE_SOURCE_DIR}/trainer/include ${tsrc}
                             ${tsrc}/cpu ${tsrc}/cuda ${sd_src} ${CMAKE_CURRENT_SOURCE_DIR}/cudacpu
                             ${kc_gen} ${GP_CBLAS_INCLUDE})
  target_compile_definitions(gp_train_cuda_sim PRIVATE GP_HAVE_CUDA GP_CUDA_ARCHS="simulated")
  target_compile_options(gp_train_cuda_sim PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-w>)
  target_link_libraries(gp_train_cuda_sim PRIVATE gp_common gp_prof gp_schema fake_cupti fake_cuda
                        ${GP_OPENBLAS_LIBRARY} Threads::Threads m ${CMAKE_DL_LIBS})
  if(GP_SANITIZE MATCHES "undefined")
    # UBSan, fatal, for the kernels too; not ASan or TSan, which track each thread's one stack:
    # the kernels' threads run on fiber stacks (sim_launch.h)
    target_compile_options(gp_train_cuda_sim PRIVATE
                           $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=undefined;-fno-sanitize-recover=all>)
  endif()
  find_path(GP_SIM_CUDNN_INCLUDE cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
  if(GP_SIM_CUDNN_INCLUDE) # only the header: sim_dnn.c is the library
    target_sources(gp_train_cuda_sim PRIVATE ${sd_src}/sim_dnn.c)
    target_include_directories(gp_train_cuda_sim SYSTEM PRIVATE ${GP_SIM_CUDNN_INCLUDE})
    target_compile_definitions(gp_train_cuda_sim PRIVATE GP_HAVE_CUDNN)
  endif()
  add_dependencies(gp_train_cuda_sim gprof-train)
  set(sd_timeout 300)
  if(GP_SANITIZE) # mlp_fp32 took 127 s under ASan at load 2
    set(sd_timeout 1200)
  endif()
  # each case: --device cuda against --device cpu from the same weights (test_simdev.py)
  foreach(case mlp_fp32 mlp_amp cnn mlp_loader refusals knobs cnn_bench_shapes graphs
               fused channels_last)
    add_test(NAME simdev_train_${case}
             COMMAND python3 ${sd_src}/test_simdev.py ${case} $<TARGET_FILE:gprof-train>
                     $<TARGET_FILE:gp_train_cuda_sim> ${CMAKE_CURRENT_BINARY_DIR}/gpusim
                     ${CMAKE_CURRENT_SOURCE_DIR}/data/idx)
    set_tests_properties(simdev_train_${case} PROPERTIES LABELS gpu-sim TIMEOUT ${sd_timeout}
                         ENVIRONMENT "GP_SANITIZE=${GP_SANITIZE}")
  endforeach()
  # the guides' techniques table on the simulated device (bench/bench_techniques.py, 2 steps)
  add_test(NAME simdev_techniques_table
           COMMAND python3 ${sd_src}/test_techniques_table.py
                   ${CMAKE_SOURCE_DIR}/bench/bench_techniques.py $<TARGET_FILE:gprof-train>
                   ${CMAKE_BINARY_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/data/idx)
  set_tests_properties(simdev_techniques_table PROPERTIES LABELS gpu-sim TIMEOUT ${sd_timeout}
                       ENVIRONMENT "GP_SANITIZE=${GP_SANITIZE}")
endif()
