# CUDA detection. GP_WITH_CUDA=AUTO builds the CUDA backend when a toolkit with nvcc is found, ON
# requires one, OFF skips it. CUPTI support in libprof needs only the toolkit's headers (libcupti
# is dlopen'ed at run time), so GP_WITH_CUPTI=AUTO turns it on wherever the headers are, also
# with GP_WITH_CUDA=OFF: the sanitizer builds test libprof's CUPTI code against the simulated
# CUPTI (tests/gpusim). Sets GP_HAVE_CUDA, GP_HAVE_CUPTI, GP_HAVE_CUDNN and imported targets
# gp::cupti and gp::cudnn. CUPTI and cuDNN are looked up in the toolkit and in pip's nvidia-*
# wheels (hints: CUPTI_ROOT, CUDNN_ROOT, as CMake variables or environment variables).
set(GP_HAVE_CUDA OFF)
set(GP_HAVE_CUPTI OFF)
set(GP_HAVE_CUDNN OFF)
set(GP_WITH_CUPTI "AUTO" CACHE STRING "Build libprof's CUPTI support (headers only): AUTO, ON or OFF")
set_property(CACHE GP_WITH_CUPTI PROPERTY STRINGS AUTO ON OFF)

# pip's layout: <site-packages>/nvidia/<pkg>/{include,lib}
set(gp_pip_roots "")
foreach(py_site $ENV{VIRTUAL_ENV}/lib/python3*/site-packages /usr/local/lib/python3*/dist-packages)
  file(GLOB found ${py_site})
  list(APPEND gp_pip_roots ${found})
endforeach()

function(gp_find_cuda_lib name header lib hint_var pip_pkg)
  set(hints ${${hint_var}} $ENV{${hint_var}} ${CUDAToolkit_LIBRARY_ROOT} ${CUDAToolkit_TARGET_DIR})
  foreach(r ${gp_pip_roots})
    list(APPEND hints ${r}/nvidia/${pip_pkg})
  endforeach()
  find_path(GP_${name}_INCLUDE ${header} HINTS ${hints} ${CUDAToolkit_INCLUDE_DIRS}
            PATH_SUFFIXES include extras/CUPTI/include)
  find_library(GP_${name}_LIBRARY ${lib} HINTS ${hints} ${CUDAToolkit_LIBRARY_DIR}
               PATH_SUFFIXES lib lib64 extras/CUPTI/lib64)
  if(GP_${name}_INCLUDE AND GP_${name}_LIBRARY)
    string(TOLOWER ${name} lower)
    add_library(gp::${lower} UNKNOWN IMPORTED GLOBAL)
    set_target_properties(gp::${lower} PROPERTIES IMPORTED_LOCATION ${GP_${name}_LIBRARY}
                          INTERFACE_INCLUDE_DIRECTORIES ${GP_${name}_INCLUDE})
    set(GP_HAVE_${name} ON PARENT_SCOPE)
  endif()
endfunction()

if(NOT CUDAToolkit_ROOT AND EXISTS /usr/local/cuda/include/cuda.h)
  set(CUDAToolkit_ROOT /usr/local/cuda)
endif()
if(NOT GP_WITH_CUPTI STREQUAL "OFF")
  find_package(CUDAToolkit QUIET)
  gp_find_cuda_lib(CUPTI cupti.h cupti CUPTI_ROOT cuda_cupti)
  if(GP_WITH_CUPTI STREQUAL "ON" AND NOT GP_HAVE_CUPTI)
    message(FATAL_ERROR "GP_WITH_CUPTI=ON but cupti.h / libcupti were not found (set CUPTI_ROOT)")
  endif()
endif()
if(GP_WITH_CUDA STREQUAL "OFF")
  return()
endif()

include(CheckLanguage)
if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
  set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
endif()
check_language(CUDA)
find_package(CUDAToolkit QUIET)
if(NOT CMAKE_CUDA_COMPILER OR NOT CUDAToolkit_FOUND)
  if(GP_WITH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "GP_WITH_CUDA=ON but no CUDA toolkit was found (set CUDAToolkit_ROOT)")
  endif()
  message(STATUS "CUDA toolkit not found: building without the CUDA backend")
  return()
endif()
# Every architecture CUDA 13 builds for, from Turing (7.5, T4 / RTX 20xx) on, as machine code,
# plus compute_75 PTX that the driver compiles for chips newer than any listed here.
# -DCMAKE_CUDA_ARCHITECTURES=native on a GPU box builds for that GPU alone (faster builds).
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES 75 80-real 86-real 90-real 100-real 120-real)
  set(GP_CUDA_ARCHS_DEFAULT ON) # tests/cuda/check_module.py checks the module has them all
endif()
string(REPLACE ";" " " GP_CUDA_ARCHS "${CMAKE_CUDA_ARCHITECTURES}")
enable_language(CUDA)
set(CMAKE_CUDA_STANDARD 17)
set(GP_HAVE_CUDA ON)

gp_find_cuda_lib(CUDNN cudnn.h cudnn CUDNN_ROOT cudnn)
