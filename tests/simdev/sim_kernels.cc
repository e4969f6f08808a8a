/* sim_kernels.cc: the trainer's own kernels (trainer/src/cuda/k_*.cu, rewritten only in their
 * launch syntax by tests/cudacpu/host_cu.py) for the simulated device: cuda_cpu_shim.h with
 * CUSIM_SIMDEV runs each launch's blocks as fibers on the calling thread (sim_launch.h), after
 * the simulated runtime has recorded the launch. */
#define CUSIM_SIMDEV 1
#include "cuda_cpu_shim.h"

#include <string.h>

thread_local dim3 threadIdx, blockIdx;
dim3 blockDim, gridDim;
cusim_block cusim_cur;
long cusim_launches;
cusim_fibers cusim_fs;

#include "k_elementwise.cc"
#include "k_loss.cc"
#include "k_optim.cc"
#include "k_pool.cc"
