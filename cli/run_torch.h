/* cli/run_torch.h: `gprof-train run -- python3 train.py` on a PyTorch script: tell such a
 * command apart, and start it with the start-up hook (lib/gprof_train_hook/sitecustomize.py
 * next to the binary) that runs torch.profiler over it and writes its traces into the run
 * folder. */
#ifndef GP_CLI_RUN_TORCH_H
#define GP_CLI_RUN_TORCH_H

struct run_exec_opts;

/* @return 1 when cmd is to be profiled with torch.profiler: --torch, or (unless --no-torch) a
 * python* interpreter whose script (or -c code) imports torch, torchrun, or python -m
 * torch.distributed.run / launch. */
int run_torch_wanted(const struct run_exec_opts *v, const char *const *cmd);

/* Check --schedule ("wait=W,warmup=U,active=A,repeat=R", any of them, in any order; the rest
 * keep their defaults). @return CLI_OK, or CLI_ERROR with the message printed. */
int run_torch_check_schedule(const char *spec);

/* Set the environment for the hook: PYTHONPATH with the hook's folder first, GP_TORCH_OUT=dir,
 * the schedule and the profiler's options. @return CLI_OK, or CLI_ERROR (no hook found). */
int run_torch_set_env(const struct run_exec_opts *v, const char *dir);

/* @return 1 when the run folder holds traces written by torchrun ranks (rank<N>*). */
int run_torch_has_ranks(const char *dir);

#endif
